"""Robert Guthrie's "Deep Learning for NLP with PyTorch" tutorials, ported: the
bag-of-words classifier, the N-gram language model, CBOW, the LSTM part-of-speech tagger
and the BiLSTM-CRF. For test_ported_scripts_six.py: returns (initial weights, losses)."""
from port_helpers import _load, _state, _weights

START_TAG, STOP_TAG = "<START>", "<STOP>"


def _model(torch, init, state0, name, model):
    _load(torch, model, _weights(init), name + ".")
    state0.update(_state(model, name + "."))
    return model


def bow(torch, nn, F, state0, init, losses):
    data = [("me gusta comer en la cafeteria".split(), "SPANISH"),
            ("Give it to me".split(), "ENGLISH"),
            ("No creo que sea una buena idea".split(), "SPANISH"),
            ("No it is not a good idea to get lost at sea".split(), "ENGLISH")]
    test_data = [("Yo creo que si".split(), "SPANISH"),
                 ("it is lost on me".split(), "ENGLISH")]
    word_to_ix = {}
    for sent, _ in data + test_data:
        for word in sent:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)
    VOCAB_SIZE, NUM_LABELS = len(word_to_ix), 2

    class BoWClassifier(nn.Module):
        def __init__(self, num_labels, vocab_size):
            super(BoWClassifier, self).__init__()
            self.linear = nn.Linear(vocab_size, num_labels)

        def forward(self, bow_vec):
            return F.log_softmax(self.linear(bow_vec), dim=1)

    def make_bow_vector(sentence, word_to_ix):
        vec = torch.zeros(len(word_to_ix))
        for word in sentence:
            vec[word_to_ix[word]] += 1
        return vec.view(1, -1)

    def make_target(label, label_to_ix):
        return torch.LongTensor([label_to_ix[label]])
    model = _model(torch, init, state0, "bow", BoWClassifier(NUM_LABELS, VOCAB_SIZE))
    with torch.no_grad():
        sample = data[0]
        log_probs = model(make_bow_vector(sample[0], word_to_ix))
        losses += log_probs.flatten().tolist()
    label_to_ix = {"SPANISH": 0, "ENGLISH": 1}
    with torch.no_grad():
        for instance, label in test_data:
            losses += model(make_bow_vector(instance, word_to_ix)).flatten().tolist()
    creo_before = next(model.parameters())[:, word_to_ix["creo"]]
    losses += creo_before.tolist()
    loss_function = nn.NLLLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    for epoch in range(20):
        for instance, label in data:
            model.zero_grad()
            bow_vec = make_bow_vector(instance, word_to_ix)
            target = make_target(label, label_to_ix)
            log_probs = model(bow_vec)
            loss = loss_function(log_probs, target)
            loss.backward()
            optimizer.step()
        losses.append(loss.item())
    with torch.no_grad():
        for instance, label in test_data:
            losses += model(make_bow_vector(instance, word_to_ix)).flatten().tolist()
    losses += next(model.parameters())[:, word_to_ix["creo"]].tolist()


TEST_SENTENCE = """When forty winters shall besiege thy brow,
And dig deep trenches in thy beauty's field,
Thy youth's proud livery so gazed on now,
Will be a totter'd weed of small worth held:""".split()


def ngram(torch, nn, F, state0, init, losses):
    CONTEXT_SIZE, EMBEDDING_DIM = 2, 10
    ngrams = [([TEST_SENTENCE[i - j - 1] for j in range(CONTEXT_SIZE)], TEST_SENTENCE[i])
              for i in range(CONTEXT_SIZE, len(TEST_SENTENCE))]
    vocab = sorted(set(TEST_SENTENCE))      # (sorted: the original's set order varies)
    word_to_ix = {word: i for i, word in enumerate(vocab)}

    class NGramLanguageModeler(nn.Module):
        def __init__(self, vocab_size, embedding_dim, context_size):
            super(NGramLanguageModeler, self).__init__()
            self.embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.linear1 = nn.Linear(context_size * embedding_dim, 128)
            self.linear2 = nn.Linear(128, vocab_size)

        def forward(self, inputs):
            embeds = self.embeddings(inputs).view((1, -1))
            out = F.relu(self.linear1(embeds))
            out = self.linear2(out)
            return F.log_softmax(out, dim=1)
    loss_function = nn.NLLLoss()
    model = _model(torch, init, state0, "ngram",
                   NGramLanguageModeler(len(vocab), EMBEDDING_DIM, CONTEXT_SIZE))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.001)
    for epoch in range(3):
        total_loss = 0
        for context, target in ngrams:
            context_idxs = torch.tensor([word_to_ix[w] for w in context], dtype=torch.long)
            model.zero_grad()
            log_probs = model(context_idxs)
            loss = loss_function(log_probs, torch.tensor([word_to_ix[target]],
                                                         dtype=torch.long))
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        losses.append(total_loss)
    losses += model.embeddings.weight[word_to_ix["beauty's"]].tolist()


def cbow(torch, nn, F, state0, init, losses):
    CONTEXT_SIZE = 2
    raw_text = """We are about to study the idea of a computational process.
Computational processes are abstract beings that inhabit computers.""".split()
    vocab = sorted(set(raw_text))
    vocab_size = len(vocab)
    word_to_ix = {word: i for i, word in enumerate(vocab)}
    data = []
    for i in range(CONTEXT_SIZE, len(raw_text) - CONTEXT_SIZE):
        context = ([raw_text[i - j - 1] for j in range(CONTEXT_SIZE)]
                   + [raw_text[i + j + 1] for j in range(CONTEXT_SIZE)])
        data.append((context, raw_text[i]))

    class CBOW(nn.Module):
        def __init__(self, vocab_size, embedding_dim):
            super().__init__()
            self.embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.linear = nn.Linear(embedding_dim, vocab_size)

        def forward(self, inputs):
            embeds = self.embeddings(inputs).sum(dim=0).view(1, -1)
            return F.log_softmax(self.linear(embeds), dim=1)

    def make_context_vector(context, word_to_ix):
        idxs = [word_to_ix[w] for w in context]
        return torch.tensor(idxs, dtype=torch.long)
    model = _model(torch, init, state0, "cbow", CBOW(vocab_size, 10))
    optimizer = torch.optim.SGD(model.parameters(), lr=0.05)
    for epoch in range(4):
        total_loss = 0
        for context, target in data:
            model.zero_grad()
            log_probs = model(make_context_vector(context, word_to_ix))
            loss = F.nll_loss(log_probs, torch.tensor([word_to_ix[target]]))
            loss.backward()
            optimizer.step()
            total_loss += loss.item()
        losses.append(total_loss)


def tagger(torch, nn, F, state0, init, losses):
    def prepare_sequence(seq, to_ix):
        idxs = [to_ix[w] for w in seq]
        return torch.tensor(idxs, dtype=torch.long)
    training_data = [("The dog ate the apple".split(), ["DET", "NN", "V", "DET", "NN"]),
                     ("Everybody read that book".split(), ["NN", "V", "DET", "NN"])]
    word_to_ix = {}
    for sent, tags in training_data:
        for word in sent:
            if word not in word_to_ix:
                word_to_ix[word] = len(word_to_ix)
    tag_to_ix = {"DET": 0, "NN": 1, "V": 2}
    EMBEDDING_DIM = HIDDEN_DIM = 6

    class LSTMTagger(nn.Module):
        def __init__(self, embedding_dim, hidden_dim, vocab_size, tagset_size):
            super(LSTMTagger, self).__init__()
            self.hidden_dim = hidden_dim
            self.word_embeddings = nn.Embedding(vocab_size, embedding_dim)
            self.lstm = nn.LSTM(embedding_dim, hidden_dim)
            self.hidden2tag = nn.Linear(hidden_dim, tagset_size)

        def forward(self, sentence):
            embeds = self.word_embeddings(sentence)
            lstm_out, _ = self.lstm(embeds.view(len(sentence), 1, -1))
            tag_space = self.hidden2tag(lstm_out.view(len(sentence), -1))
            return F.log_softmax(tag_space, dim=1)
    model = _model(torch, init, state0, "tagger",
                   LSTMTagger(EMBEDDING_DIM, HIDDEN_DIM, len(word_to_ix), len(tag_to_ix)))
    loss_function = nn.NLLLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    with torch.no_grad():
        inputs = prepare_sequence(training_data[0][0], word_to_ix)
        losses += model(inputs).flatten().tolist()
    for epoch in range(300):              # (the tutorial's count; a loss every 30th kept)
        for sentence, tags in training_data:
            model.zero_grad()
            sentence_in = prepare_sequence(sentence, word_to_ix)
            targets = prepare_sequence(tags, tag_to_ix)
            tag_scores = model(sentence_in)
            loss = loss_function(tag_scores, targets)
            loss.backward()
            optimizer.step()
        if epoch % 30 == 29:
            losses.append(loss.item())
    with torch.no_grad():
        tag_scores = model(prepare_sequence(training_data[0][0], word_to_ix))
        losses += tag_scores.argmax(1).tolist()



def nlp_tutorial(torch, nn, F, data_mod, init=None):
    state0, losses = {}, []
    for part in (bow, ngram, cbow, tagger):
        torch.manual_seed(1)
        part(torch, nn, F, state0, init, losses)
    return state0, losses
