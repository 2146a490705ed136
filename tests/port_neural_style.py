"""PyTorch's "Neural Transfer Using PyTorch" tutorial, ported: ContentLoss and StyleLoss as
transparent modules, gram_matrix, the Normalization module, the model rebuilt from
`cnn.children()` with the losses inserted after chosen convolutions and trimmed after the
last loss (`model[:(i + 1)]`), then LBFGS on the input image with a closure that clamps it.
A tiny random-weight CNN stands in for VGG19 (a download), and 16x16 random images for the
photographs. For test_ported_scripts_nine.py: returns (initial weights and images, values
seen)."""
import numpy as np

from port_helpers import _drawn, _load, _state, _weights


def neural_style(torch, nn, F, data_mod, init=None, num_steps=6):
    optim = torch.optim
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    device = torch.device("cpu")                    # (the tests compare on the CPU)
    torch.set_default_device(device)
    state0, seen = {}, []
    imsize = 16
    rng = np.random.default_rng(0)
    # image_loader's output: (1, 3, imsize, imsize) in [0, 1]
    # (float64, here and the CNN: LBFGS's curvature pairs and the 1e6 style weight amplify
    # float32 rounding, which the two libraries do in different orders)
    style_img = torch.tensor(rng.random((1, 3, imsize, imsize)))
    content_img = torch.tensor(rng.random((1, 3, imsize, imsize)))
    assert style_img.size() == content_img.size(), \
        "we need to import style and content images of the same size"

    class ContentLoss(nn.Module):
        def __init__(self, target,):
            super(ContentLoss, self).__init__()
            # detached: a stated value, not a variable of the graph
            self.target = target.detach()

        def forward(self, input):
            self.loss = F.mse_loss(input, self.target)
            return input

    def gram_matrix(input):
        a, b, c, d = input.size()          # a=batch size, b=feature maps, (c,d)=dimensions
        features = input.view(a * b, c * d)
        G = torch.mm(features, features.t())
        return G.div(a * b * c * d)

    class StyleLoss(nn.Module):
        def __init__(self, target_feature):
            super(StyleLoss, self).__init__()
            self.target = gram_matrix(target_feature).detach()

        def forward(self, input):
            G = gram_matrix(input)
            self.loss = F.mse_loss(G, self.target)
            return input

    # VGG19's features, in miniature (random weights)
    cnn = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.ReLU(inplace=True),
                        nn.Conv2d(8, 8, 3, padding=1), nn.ReLU(inplace=True),
                        nn.MaxPool2d(2, 2),
                        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(inplace=True),
                        nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(inplace=True),
                        nn.MaxPool2d(2, 2),
                        nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(inplace=True),
                        nn.Conv2d(16, 16, 3, padding=1), nn.ReLU(inplace=True)).eval()
    if init is None:
        state0.update(_state(cnn, "cnn."))
    _load(torch, cnn, _weights(init), "cnn.")
    cnn = cnn.double()
    cnn_normalization_mean = torch.tensor([0.485, 0.456, 0.406])
    cnn_normalization_std = torch.tensor([0.229, 0.224, 0.225])

    class Normalization(nn.Module):
        def __init__(self, mean, std):
            super(Normalization, self).__init__()
            # .view the mean and std to make them [C x 1 x 1]: they broadcast over the image
            self.mean = torch.tensor(mean).view(-1, 1, 1)
            self.std = torch.tensor(std).view(-1, 1, 1)

        def forward(self, img):
            return (img - self.mean) / self.std

    content_layers_default = ['conv_4']
    style_layers_default = ['conv_1', 'conv_2', 'conv_3', 'conv_4', 'conv_5']

    def get_style_model_and_losses(cnn, normalization_mean, normalization_std,
                                   style_img, content_img,
                                   content_layers=content_layers_default,
                                   style_layers=style_layers_default):
        normalization = Normalization(normalization_mean, normalization_std)
        content_losses = []
        style_losses = []
        model = nn.Sequential(normalization)
        i = 0  # incremented every time we see a conv
        for layer in cnn.children():
            if isinstance(layer, nn.Conv2d):
                i += 1
                name = 'conv_{}'.format(i)
            elif isinstance(layer, nn.ReLU):
                name = 'relu_{}'.format(i)
                # the in-place version does not play nicely with the losses inserted
                layer = nn.ReLU(inplace=False)
            elif isinstance(layer, nn.MaxPool2d):
                name = 'pool_{}'.format(i)
            elif isinstance(layer, nn.BatchNorm2d):
                name = 'bn_{}'.format(i)
            else:
                raise RuntimeError('Unrecognized layer: {}'.format(layer.__class__.__name__))
            model.add_module(name, layer)
            if name in content_layers:
                target = model(content_img).detach()
                content_loss = ContentLoss(target)
                model.add_module("content_loss_{}".format(i), content_loss)
                content_losses.append(content_loss)
            if name in style_layers:
                target_feature = model(style_img).detach()
                style_loss = StyleLoss(target_feature)
                model.add_module("style_loss_{}".format(i), style_loss)
                style_losses.append(style_loss)
        # trim off the layers after the last content and style losses
        for i in range(len(model) - 1, -1, -1):
            if isinstance(model[i], ContentLoss) or isinstance(model[i], StyleLoss):
                break
        model = model[:(i + 1)]
        return model, style_losses, content_losses

    input_img = content_img.clone()
    # (or white noise: torch.randn(content_img.data.size()), replayed under PyTorch)
    noise = _drawn(torch, init, state0, "noise", lambda: torch.randn(content_img.data.size()))
    noise = noise.double()
    seen.append(float(noise.abs().mean()))

    def get_input_optimizer(input_img):
        optimizer = optim.LBFGS([input_img])
        return optimizer

    def run_style_transfer(cnn, normalization_mean, normalization_std,
                           content_img, style_img, input_img, num_steps=300,
                           style_weight=1000000, content_weight=1):
        print('Building the style transfer model..')
        model, style_losses, content_losses = get_style_model_and_losses(
            cnn, normalization_mean, normalization_std, style_img, content_img)
        print(model)
        seen.append(len(model))
        seen.append(sum(1 for _ in model.children()))
        # only the input is optimised
        input_img.requires_grad_(True)
        model.eval()
        model.requires_grad_(False)
        assert not any(p.requires_grad for p in model.parameters())
        optimizer = get_input_optimizer(input_img)
        print('Optimizing..')
        run = [0]
        while run[0] <= num_steps:
            def closure():
                # correct the values of the updated input image
                with torch.no_grad():
                    input_img.clamp_(0, 1)
                optimizer.zero_grad()
                model(input_img)
                style_score = 0
                content_score = 0
                for sl in style_losses:
                    style_score += sl.loss
                for cl in content_losses:
                    content_score += cl.loss
                style_score *= style_weight
                content_score *= content_weight
                loss = style_score + content_score
                loss.backward()
                run[0] += 1
                if run[0] % 2 == 0:
                    print("run {}:".format(run))
                    print('Style Loss : {:4f} Content Loss: {:4f}'.format(
                        style_score.item(), content_score.item()))
                    print()
                seen.extend([style_score.item(), content_score.item()])
                return style_score + content_score
            optimizer.step(closure)
        # a last correction
        with torch.no_grad():
            input_img.clamp_(0, 1)
        return input_img

    output = run_style_transfer(cnn, cnn_normalization_mean, cnn_normalization_std,
                                content_img, style_img, input_img, num_steps=num_steps)
    seen.append(len(seen))                          # (3 + 2 per closure call)
    out = output.detach()
    seen += [float(out.min()), float(out.max()), float(out.sum())]
    seen.append(float(output.detach().cpu().squeeze(0).numpy().mean()))
    torch.set_default_device(None)                  # (no default device left set)
    return state0, seen
