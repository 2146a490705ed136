"""The README's promises to a reader: its "minigrad in a dozen lines" runs and prints what
its comments say, and every file its reading order names exists."""
import contextlib
import io
import pathlib
import re

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def _section(title):
    start = README.index(f"## {title}")
    end = README.find("\n## ", start + 1)
    return README[start:end if end != -1 else None]


def test_dozen_lines_run_and_print_the_hooked_gradient():
    code = re.search(r"```python\n(.*?)```", _section("minigrad in a dozen lines"), re.S)
    out = io.StringIO()
    names = {}
    with contextlib.redirect_stdout(out):
        exec(compile(code.group(1), "README.md", "exec"), names)   # noqa: S102
    h = names["h"]
    # "prints h's gradient, 2h; h.grad holds it too"
    assert np.allclose(h.grad.numpy(), 2 * h.detach().numpy())
    assert "tensor([[ 4.,  8.]" in out.getvalue()


def test_reading_order_names_files_that_exist():
    # short names ("ops/reduce.py", "masks.py") are under minigrad/ or minitransformer/
    missing = [path for path in re.findall(r"[\w/]+\.py", _section("Reading the source"))
               if not any((ROOT / where / path).is_file()
                          for where in ("", "minigrad", "minitransformer"))]
    assert not missing, f"README's reading order names files that do not exist: {missing}"
