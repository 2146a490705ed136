"""PyTorch's "NLP From Scratch: Translation with a Sequence to Sequence Network and
Attention" tutorial, ported: Lang, the normalising and filtering of pairs, EncoderRNN,
BahdanauAttention, AttnDecoderRNN (teacher forcing in training, its own guesses when
evaluating), get_dataloader's TensorDataset + RandomSampler, train_epoch with two Adams and
NLLLoss, and evaluate. The corpus is a few made-up pairs held here (the tutorial reads
eng-fra.txt). For test_ported_scripts_four.py: returns (initial weights, losses)."""
import re
import time
import unicodedata

import numpy as np

from port_helpers import _Replayed, _load, _state

# "English\tFrench", as a line of the tutorial's data/eng-fra.txt
LINES = ["I am cold.\tJ'ai froid.", "I am tired.\tJe suis fatigué.",
         "He is tall.\tIl est grand.", "She is happy.\tElle est heureuse.",
         "You are late.\tTu es en retard.", "We are ready.\tNous sommes prêts.",
         "They are here.\tIls sont ici.", "I am happy.\tJe suis heureux.",
         "He is tired.\tIl est fatigué.", "She is tall.\tElle est grande.",
         "You are ready.\tVous êtes prêts.", "It is cold.\tIl fait froid.",
         "We are tired of waiting for the bus.\tNous en avons assez d'attendre."]


def translation(torch, nn, F, data_mod, init=None, dropout=0.1):
    optim = torch.optim
    TensorDataset, DataLoader, RandomSampler = (data_mod.TensorDataset, data_mod.DataLoader,
                                                data_mod.RandomSampler)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device("cpu")             # (the tests compare on the CPU)
    SOS_token, EOS_token = 0, 1

    class Lang:
        def __init__(self, name):
            self.name = name
            self.word2index = {}
            self.word2count = {}
            self.index2word = {0: "SOS", 1: "EOS"}
            self.n_words = 2                 # count SOS and EOS

        def addSentence(self, sentence):
            for word in sentence.split(" "):
                self.addWord(word)

        def addWord(self, word):
            if word not in self.word2index:
                self.word2index[word] = self.n_words
                self.word2count[word] = 1
                self.index2word[self.n_words] = word
                self.n_words += 1
            else:
                self.word2count[word] += 1

    def unicodeToAscii(s):
        return "".join(c for c in unicodedata.normalize("NFD", s)
                       if unicodedata.category(c) != "Mn")

    def normalizeString(s):
        s = unicodeToAscii(s.lower().strip())
        s = re.sub(r"([.!?])", r" \1", s)
        s = re.sub(r"[^a-zA-Z.!?]+", r" ", s)
        return s.strip()

    def readLangs(lang1, lang2, reverse=False):
        lines = LINES                        # open('data/%s-%s.txt' ...).read().split('\n')
        pairs = [[normalizeString(s) for s in l.split("\t")] for l in lines]
        if reverse:
            pairs = [list(reversed(p)) for p in pairs]
            input_lang, output_lang = Lang(lang2), Lang(lang1)
        else:
            input_lang, output_lang = Lang(lang1), Lang(lang2)
        return input_lang, output_lang, pairs
    MAX_LENGTH = 6
    eng_prefixes = ("i am ", "i m ", "he is", "he s ", "she is", "she s ", "you are",
                    "you re ", "we are", "we re ", "they are", "they re ", "it is")

    def filterPair(p):
        return len(p[0].split(" ")) < MAX_LENGTH and len(p[1].split(" ")) < MAX_LENGTH and \
            p[1].startswith(eng_prefixes)

    def filterPairs(pairs):
        return [pair for pair in pairs if filterPair(pair)]

    def prepareData(lang1, lang2, reverse=False):
        input_lang, output_lang, pairs = readLangs(lang1, lang2, reverse)
        pairs = filterPairs(pairs)
        for pair in pairs:
            input_lang.addSentence(pair[0])
            output_lang.addSentence(pair[1])
        return input_lang, output_lang, pairs

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size, dropout_p=0.1):
            super(EncoderRNN, self).__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size, batch_first=True)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, input):
            embedded = self.dropout(self.embedding(input))
            output, hidden = self.gru(embedded)
            return output, hidden

    class BahdanauAttention(nn.Module):
        def __init__(self, hidden_size):
            super(BahdanauAttention, self).__init__()
            self.Wa = nn.Linear(hidden_size, hidden_size)
            self.Ua = nn.Linear(hidden_size, hidden_size)
            self.Va = nn.Linear(hidden_size, 1)

        def forward(self, query, keys):
            scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys)))
            scores = scores.squeeze(2).unsqueeze(1)
            weights = F.softmax(scores, dim=-1)
            context = torch.bmm(weights, keys)
            return context, weights

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1):
            super(AttnDecoderRNN, self).__init__()
            self.embedding = nn.Embedding(output_size, hidden_size)
            self.attention = BahdanauAttention(hidden_size)
            self.gru = nn.GRU(2 * hidden_size, hidden_size, batch_first=True)
            self.out = nn.Linear(hidden_size, output_size)
            self.dropout = nn.Dropout(dropout_p)

        def forward(self, encoder_outputs, encoder_hidden, target_tensor=None):
            batch_size = encoder_outputs.size(0)
            decoder_input = torch.empty(batch_size, 1, dtype=torch.long,
                                        device=device).fill_(SOS_token)
            decoder_hidden = encoder_hidden
            decoder_outputs = []
            attentions = []
            for i in range(MAX_LENGTH):
                decoder_output, decoder_hidden, attn_weights = self.forward_step(
                    decoder_input, decoder_hidden, encoder_outputs)
                decoder_outputs.append(decoder_output)
                attentions.append(attn_weights)
                if target_tensor is not None:
                    decoder_input = target_tensor[:, i].unsqueeze(1)      # teacher forcing
                else:
                    topv, topi = decoder_output.topk(1)
                    decoder_input = topi.squeeze(-1).detach()   # detach from history as input
            decoder_outputs = torch.cat(decoder_outputs, dim=1)
            decoder_outputs = F.log_softmax(decoder_outputs, dim=-1)
            attentions = torch.cat(attentions, dim=1)
            return decoder_outputs, decoder_hidden, attentions

        def forward_step(self, input, hidden, encoder_outputs):
            embedded = self.dropout(self.embedding(input))
            query = hidden.permute(1, 0, 2)
            context, attn_weights = self.attention(query, encoder_outputs)
            input_gru = torch.cat((embedded, context), dim=2)
            output, hidden = self.gru(input_gru, hidden)
            output = self.out(output)
            return output, hidden, attn_weights

    def indexesFromSentence(lang, sentence):
        return [lang.word2index[word] for word in sentence.split(" ")]

    def tensorFromSentence(lang, sentence):
        indexes = indexesFromSentence(lang, sentence)
        indexes.append(EOS_token)
        return torch.tensor(indexes, dtype=torch.long, device=device).view(1, -1)
    state0 = {}

    def get_dataloader(batch_size):
        input_lang, output_lang, pairs = prepareData("eng", "fra", True)
        n = len(pairs)
        input_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
        target_ids = np.zeros((n, MAX_LENGTH), dtype=np.int32)
        for idx, (inp, tgt) in enumerate(pairs):
            inp_ids = indexesFromSentence(input_lang, inp)
            tgt_ids = indexesFromSentence(output_lang, tgt)
            inp_ids.append(EOS_token)
            tgt_ids.append(EOS_token)
            input_ids[idx, :len(inp_ids)] = inp_ids
            target_ids[idx, :len(tgt_ids)] = tgt_ids
        train_data = TensorDataset(torch.LongTensor(input_ids).to(device),
                                   torch.LongTensor(target_ids).to(device))
        train_sampler = RandomSampler(train_data)
        # PyTorch's generator draws other orders: its run takes minigrad's (port_helpers)
        train_sampler = _Replayed(init, state0, "order", train_sampler)
        train_dataloader = DataLoader(train_data, sampler=train_sampler, batch_size=batch_size)
        return input_lang, output_lang, pairs, train_dataloader

    def train_epoch(dataloader, encoder, decoder, encoder_optimizer, decoder_optimizer,
                    criterion, losses):
        total_loss = 0
        for data in dataloader:
            input_tensor, target_tensor = data
            encoder_optimizer.zero_grad()
            decoder_optimizer.zero_grad()
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, _, _ = decoder(encoder_outputs, encoder_hidden, target_tensor)
            loss = criterion(decoder_outputs.view(-1, decoder_outputs.size(-1)),
                             target_tensor.view(-1))
            loss.backward()
            encoder_optimizer.step()
            decoder_optimizer.step()
            total_loss += loss.item()
            losses.append(loss.item())
        return total_loss / len(dataloader)

    def asMinutes(s):
        m = s // 60
        return "%dm %ds" % (m, s - m * 60)

    def timeSince(since, percent):
        s = time.time() - since
        es = s / percent
        return "%s (- %s)" % (asMinutes(s), asMinutes(es - s))

    def train(train_dataloader, encoder, decoder, n_epochs, learning_rate=0.001,
              print_every=100, plot_every=100):
        start, losses, plot_losses = time.time(), [], []
        print_loss_total = 0                 # reset every print_every
        plot_loss_total = 0                  # reset every plot_every
        encoder_optimizer = optim.Adam(encoder.parameters(), lr=learning_rate)
        decoder_optimizer = optim.Adam(decoder.parameters(), lr=learning_rate)
        criterion = nn.NLLLoss()
        for epoch in range(1, n_epochs + 1):
            loss = train_epoch(train_dataloader, encoder, decoder, encoder_optimizer,
                               decoder_optimizer, criterion, losses)
            print_loss_total += loss
            plot_loss_total += loss
            if epoch % print_every == 0:
                print_loss_avg = print_loss_total / print_every
                print_loss_total = 0
                assert "%" in "%s (%d %d%%) %.4f" % (timeSince(start, epoch / n_epochs), epoch,
                                                      epoch / n_epochs * 100, print_loss_avg)
            if epoch % plot_every == 0:
                plot_losses.append(plot_loss_total / plot_every)
                plot_loss_total = 0
        return losses + plot_losses

    def evaluate(encoder, decoder, sentence, input_lang, output_lang):
        with torch.no_grad():
            input_tensor = tensorFromSentence(input_lang, sentence)
            encoder_outputs, encoder_hidden = encoder(input_tensor)
            decoder_outputs, decoder_hidden, decoder_attn = decoder(encoder_outputs,
                                                                    encoder_hidden)
            _, topi = decoder_outputs.topk(1)
            decoded_ids = topi.squeeze()
            decoded_words = []
            for idx in decoded_ids:
                if idx.item() == EOS_token:
                    decoded_words.append("<EOS>")
                    break
                decoded_words.append(output_lang.index2word[idx.item()])
        return decoded_words, decoder_attn
    torch.manual_seed(0)
    hidden_size, batch_size = 16, 4
    input_lang, output_lang, pairs, train_dataloader = get_dataloader(batch_size)
    assert len(pairs) == 12 and pairs[0] == ["j ai froid .", "i am cold ."]
    encoder = EncoderRNN(input_lang.n_words, hidden_size, dropout).to(device)
    decoder = AttnDecoderRNN(hidden_size, output_lang.n_words, dropout).to(device)
    _load(torch, encoder, init, "encoder.")
    _load(torch, decoder, init, "decoder.")
    state0.update({**_state(encoder, "encoder."), **_state(decoder, "decoder.")})
    losses = train(train_dataloader, encoder, decoder, 4, learning_rate=0.01, print_every=2,
                   plot_every=2)
    encoder.eval()
    decoder.eval()
    for pair in pairs[:3]:                       # evaluateRandomly, in order here
        output_words, attentions = evaluate(encoder, decoder, pair[0], input_lang, output_lang)
        output_sentence = " ".join(output_words)
        assert tuple(attentions.shape) == (1, MAX_LENGTH, len(pair[0].split(" ")) + 1)
        losses.append(float(output_sentence == pair[1] + " <EOS>"))
    # evaluateAndShowAttention: the rows of the words decoded, as showAttention plots them
    output_words, attentions = evaluate(encoder, decoder, "il est grand .", input_lang,
                                        output_lang)
    shown = attentions[0, :len(output_words), :].cpu().numpy()
    assert shown.shape == (len(output_words), 5) and np.allclose(shown.sum(1), 1, atol=1e-5)
    losses += shown[0].tolist()
    return state0, losses
