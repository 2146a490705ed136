"""The translation tutorial's older version (before its batched rewrite), ported: one pair
at a time, EncoderRNN stepped word by word into a preallocated `encoder_outputs` (each
row written in place, `encoder_outputs[ei] = encoder_output[0, 0]`), the AttnDecoderRNN of
a learned `attn` over max_length positions, teacher forcing chosen by a coin, the loss
summed from 0, greedy decoding stopping at EOS, SGD. The pairs are port_translation's.
For test_ported_scripts_four.py: returns (initial weights, losses)."""
import random

from port_helpers import _load, _state


def translation_classic(torch, nn, F, data_mod, init=None, dropout=0.1):
    optim = torch.optim
    device = torch.device("cpu")
    SOS_token, EOS_token, MAX_LENGTH = 0, 1, 6
    pairs = [["j ai froid .", "i am cold ."], ["il est grand .", "he is tall ."],
             ["elle est heureuse .", "she is happy ."], ["nous sommes prets .", "we are ready ."],
             ["je suis fatigue .", "i am tired ."], ["il est fatigue .", "he is tired ."]]
    index = [{"SOS": 0, "EOS": 1}, {"SOS": 0, "EOS": 1}]       # Lang.word2index, in short
    for pair in pairs:
        for lang, sentence in zip(index, pair):
            for word in sentence.split(" "):
                lang.setdefault(word, len(lang))
    input_lang, output_lang = index

    class EncoderRNN(nn.Module):
        def __init__(self, input_size, hidden_size):
            super(EncoderRNN, self).__init__()
            self.hidden_size = hidden_size
            self.embedding = nn.Embedding(input_size, hidden_size)
            self.gru = nn.GRU(hidden_size, hidden_size)

        def forward(self, input, hidden):
            embedded = self.embedding(input).view(1, 1, -1)
            output = embedded
            output, hidden = self.gru(output, hidden)
            return output, hidden

        def initHidden(self):
            return torch.zeros(1, 1, self.hidden_size, device=device)

    class AttnDecoderRNN(nn.Module):
        def __init__(self, hidden_size, output_size, dropout_p=0.1, max_length=MAX_LENGTH):
            super(AttnDecoderRNN, self).__init__()
            self.hidden_size = hidden_size
            self.output_size = output_size
            self.dropout_p = dropout_p
            self.max_length = max_length
            self.embedding = nn.Embedding(self.output_size, self.hidden_size)
            self.attn = nn.Linear(self.hidden_size * 2, self.max_length)
            self.attn_combine = nn.Linear(self.hidden_size * 2, self.hidden_size)
            self.dropout = nn.Dropout(self.dropout_p)
            self.gru = nn.GRU(self.hidden_size, self.hidden_size)
            self.out = nn.Linear(self.hidden_size, self.output_size)

        def forward(self, input, hidden, encoder_outputs):
            embedded = self.embedding(input).view(1, 1, -1)
            embedded = self.dropout(embedded)
            attn_weights = F.softmax(self.attn(torch.cat((embedded[0], hidden[0]), 1)), dim=1)
            attn_applied = torch.bmm(attn_weights.unsqueeze(0), encoder_outputs.unsqueeze(0))
            output = torch.cat((embedded[0], attn_applied[0]), 1)
            output = self.attn_combine(output).unsqueeze(0)
            output = F.relu(output)
            output, hidden = self.gru(output, hidden)
            output = F.log_softmax(self.out(output[0]), dim=1)
            return output, hidden, attn_weights

    def tensorFromSentence(lang, sentence):
        indexes = [lang[word] for word in sentence.split(" ")]
        indexes.append(EOS_token)
        return torch.tensor(indexes, dtype=torch.long, device=device).view(-1, 1)

    def tensorsFromPair(pair):
        return (tensorFromSentence(input_lang, pair[0]),
                tensorFromSentence(output_lang, pair[1]))
    teacher_forcing_ratio = 0.5
    rng = random.Random(1)              # the tutorial's `random`, seeded here

    def train(input_tensor, target_tensor, encoder, decoder, encoder_optimizer,
              decoder_optimizer, criterion, max_length=MAX_LENGTH):
        encoder_hidden = encoder.initHidden()
        encoder_optimizer.zero_grad()
        decoder_optimizer.zero_grad()
        input_length = input_tensor.size(0)
        target_length = target_tensor.size(0)
        encoder_outputs = torch.zeros(max_length, encoder.hidden_size, device=device)
        loss = 0
        for ei in range(input_length):
            encoder_output, encoder_hidden = encoder(input_tensor[ei], encoder_hidden)
            encoder_outputs[ei] = encoder_output[0, 0]
        decoder_input = torch.tensor([[SOS_token]], device=device)
        decoder_hidden = encoder_hidden
        use_teacher_forcing = True if rng.random() < teacher_forcing_ratio else False
        if use_teacher_forcing:          # the target as the next input
            for di in range(target_length):
                decoder_output, decoder_hidden, decoder_attention = decoder(
                    decoder_input, decoder_hidden, encoder_outputs)
                loss += criterion(decoder_output, target_tensor[di])
                decoder_input = target_tensor[di]     # teacher forcing
        else:                            # its own predictions as the next input
            for di in range(target_length):
                decoder_output, decoder_hidden, decoder_attention = decoder(
                    decoder_input, decoder_hidden, encoder_outputs)
                topv, topi = decoder_output.topk(1)
                decoder_input = topi.squeeze().detach()     # detach from history as input
                loss += criterion(decoder_output, target_tensor[di])
                if decoder_input.item() == EOS_token:
                    break
        loss.backward()
        encoder_optimizer.step()
        decoder_optimizer.step()
        return loss.item() / target_length

    def evaluate(encoder, decoder, sentence, max_length=MAX_LENGTH):
        with torch.no_grad():
            input_tensor = tensorFromSentence(input_lang, sentence)
            input_length = input_tensor.size()[0]
            encoder_hidden = encoder.initHidden()
            encoder_outputs = torch.zeros(max_length, encoder.hidden_size, device=device)
            for ei in range(input_length):
                encoder_output, encoder_hidden = encoder(input_tensor[ei], encoder_hidden)
                encoder_outputs[ei] += encoder_output[0, 0]
            decoder_input = torch.tensor([[SOS_token]], device=device)   # SOS
            decoder_hidden = encoder_hidden
            decoded_words = []
            decoder_attentions = torch.zeros(max_length, max_length)
            for di in range(max_length):
                decoder_output, decoder_hidden, decoder_attention = decoder(
                    decoder_input, decoder_hidden, encoder_outputs)
                decoder_attentions[di] = decoder_attention.data
                topv, topi = decoder_output.data.topk(1)
                if topi.item() == EOS_token:
                    decoded_words.append("<EOS>")
                    break
                decoded_words.append(topi.item())
                decoder_input = topi.squeeze().detach()
            return decoded_words, decoder_attentions[:di + 1]
    torch.manual_seed(0)
    hidden_size = 16
    encoder1 = EncoderRNN(len(input_lang), hidden_size).to(device)
    attn_decoder1 = AttnDecoderRNN(hidden_size, len(output_lang), dropout_p=dropout).to(device)
    _load(torch, encoder1, init, "encoder.")
    _load(torch, attn_decoder1, init, "decoder.")
    state0 = {**_state(encoder1, "encoder."), **_state(attn_decoder1, "decoder.")}
    n_iters, learning_rate = 16, 0.05
    encoder_optimizer = optim.SGD(encoder1.parameters(), lr=learning_rate)
    decoder_optimizer = optim.SGD(attn_decoder1.parameters(), lr=learning_rate)
    training_pairs = [tensorsFromPair(rng.choice(pairs)) for i in range(n_iters)]
    criterion = nn.NLLLoss()
    losses = []
    for iter in range(1, n_iters + 1):
        training_pair = training_pairs[iter - 1]
        input_tensor = training_pair[0]
        target_tensor = training_pair[1]
        losses.append(train(input_tensor, target_tensor, encoder1, attn_decoder1,
                            encoder_optimizer, decoder_optimizer, criterion))
    encoder1.eval()
    attn_decoder1.eval()
    output_words, attentions = evaluate(encoder1, attn_decoder1, "il est grand .")
    assert tuple(attentions.shape) == (len(output_words), MAX_LENGTH)
    return state0, losses + attentions[0].tolist()
