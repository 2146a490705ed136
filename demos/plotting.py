"""What every demo does with a finished matplotlib figure."""
import os


def save_figure(fig, path, what):
    """Lay out `fig`, write it as a PNG at `path` (making its folder), close it, and say so."""
    import matplotlib.pyplot as plt
    fig.tight_layout()
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    fig.savefig(path, dpi=100)
    plt.close(fig)
    print(f"saved {what} to {path}")
    return path
