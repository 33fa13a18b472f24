"""The command line and the core's messages in both languages (gettext, capsviz.texts): the
catalogue holds exactly the code's texts, translated with their fields, and compiled; the
help, the errors and the eval report follow the locale."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from capsviz import texts

from ..conftest import ROOT, mnist_root


def load_translations_tool():
    spec = importlib.util.spec_from_file_location("translations", ROOT / "tools" / "translations.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def capsviz(*args, language: str):
    """``python -m capsviz ARGS`` with the environment asking for ``language`` (a locale name)."""
    env = {k: v for k, v in os.environ.items() if k not in ("LANGUAGE", "LC_ALL", "LC_MESSAGES")}
    env["LANG"] = language
    return subprocess.run([sys.executable, "-m", "capsviz", *args], capture_output=True, text=True, env=env)


def test_the_message_catalogue_is_that_of_the_code_and_compiled():
    """What tools/translations.py --check says of the .po: it lacks no text of the code and
    holds none the code no longer has, every text is translated with the same {fields}, and
    the .mo is the .po compiled."""
    tool = load_translations_tool()
    assert tool.check_po("zh_CN") == []
    assert (ROOT / "capsviz/locale/zh_CN/LC_MESSAGES/capsviz.mo").is_file(), "installing capsviz compiles the .po"


def test_a_translation_with_other_fields_is_caught(tmp_path, monkeypatch):
    """The check compares each translation's {fields} with its source's (a dropped field
    would raise KeyError when the message is shown)."""
    tool = load_translations_tool()
    po = tool.po_path("zh_CN")
    broken = tmp_path / "zh_CN" / "LC_MESSAGES" / "capsviz.po"
    broken.parent.mkdir(parents=True)
    text = po.read_text(encoding="utf-8")
    assert 'msgstr "检查点：{path}"' in text
    broken.write_text(text.replace('msgstr "检查点：{path}"', 'msgstr "检查点：{file}"'), encoding="utf-8")
    monkeypatch.setattr(tool, "LOCALE", tmp_path)
    problems = tool.check_po("zh_CN")
    assert any("'checkpoint: {path}' has other {fields}" in p for p in problems), problems


@pytest.mark.parametrize(
    ("names", "language"),
    [("zh_CN.UTF-8", "zh_CN"), ("zh_TW", "zh_CN"), ("zh", "zh_CN"), ("de:zh_CN", "en"), ("C.UTF-8", "en"), ("", "en")],
)
def test_the_language_of_a_locale(names, language):
    assert texts.language_of(names) == language


def test_messages_in_the_language_set():
    texts.set_language("zh_CN")
    assert texts._("error: {message}", message="x") == "错误：x"
    assert texts._("{noun} >= {low}", noun=texts._("an integer"), low=1) == "≥ 1 的整数"
    texts.set_language("en")
    assert texts._("error: {message}", message="x") == "error: x"
    with pytest.raises(ValueError, match="language must be one of en, zh_CN"):
        texts.set_language("fr")


def test_help_follows_the_locale():
    zh = capsviz("--help", language="zh_CN.UTF-8")
    assert zh.returncode == 0
    assert zh.stdout.startswith("用法：capsviz")
    for line in ("显示此帮助信息并退出", "输出检查点的测试准确率", "无界面训练，显示进度条"):
        assert line in zh.stdout
    en = capsviz("--help", language="C.UTF-8")
    assert en.stdout.startswith("usage: capsviz") and "show this help message and exit" in en.stdout
    # a command's own help, with its ranges from the training settings
    train = capsviz("train", "--help", language="zh_CN.UTF-8")
    assert "要达到的总轮数（恢复的训练计入已完成的轮数）；[1, 10,000] 内的整数（默认：10）" in train.stdout
    assert "每个优化步的图像数；≥ 1 的整数（默认：128）" in train.stdout
    # argparse's headings end in the language's own colon, a subcommand's too
    classify = capsviz("classify", "--help", language="zh_CN.UTF-8")
    assert "\n位置参数：\n" in classify.stdout and "\n选项：\n" in classify.stdout and "选项:" not in classify.stdout
    assert "\npositional arguments:\n" in capsviz("classify", "--help", language="C.UTF-8").stdout


def test_errors_follow_the_locale(tmp_path):
    missing = tmp_path / "missing.safetensors"
    zh = capsviz("eval", "--checkpoint", str(missing), language="zh_CN.UTF-8")
    assert zh.returncode == 2 and zh.stderr.strip() == f"错误：{missing}：没有这个文件"
    en = capsviz("eval", "--checkpoint", str(missing), language="en_US.UTF-8")
    assert en.returncode == 2 and en.stderr.strip() == f"error: {missing}: no such file"
    # argparse's own error, and a range checked at parse time
    bad = capsviz("eval", "--routing-iterations", "0", language="zh_CN.UTF-8")
    assert bad.returncode == 2
    assert (
        bad.stderr.splitlines()[-1]
        == "capsviz eval：错误：参数 --routing-iterations：必须是 [1, 100] 内的整数（得到 0）"
    )
    # a space between the Chinese and a range's first sign, as before a bracket
    low = capsviz("train", "--batch-size", "0", language="zh_CN.UTF-8")
    assert low.stderr.splitlines()[-1] == "capsviz train：错误：参数 --batch-size：必须是 ≥ 1 的整数（得到 0）"
    # the app's own options: a device refused before Qt starts (no display is needed to say so)
    device = capsviz("--device", "quantum", language="zh_CN.UTF-8")
    assert device.returncode == 2
    assert device.stderr.strip() == "错误：未知设备 'quantum'；请用 auto、cpu、cuda、cuda:N 或 mps"
    both = capsviz("train", "--resume", "a", "--init", "b", language="zh_CN.UTF-8")
    assert both.stderr.strip() == "错误：--resume（训练检查点）和 --init（仅权重）只能用其一，不能同时使用"


# English words that may stay in a Chinese report: names, units and symbols
NAMES = {"MNIST", "MultiMNIST", "CNN", "CapsNet", "capsviz"}


def bars(line: str) -> list[int]:
    """The terminal columns of the " | " separators in ``line`` (:func:`display_width`)."""
    from capsviz.commands.common import display_width

    return [display_width(line[:k]) for k, c in enumerate(line) if c == "|"]


@pytest.mark.skipif(mnist_root() is None, reason="needs CAPSVIZ_DATA (the MNIST test set)")
def test_eval_reads_in_chinese(shipped_checkpoint):
    """``LANG=zh_CN.UTF-8 capsviz eval --per-iteration 1``: the same figures as in English,
    every line in Chinese but the checkpoint's path, the names and the numbers."""
    r = capsviz("eval", "--per-iteration", "1", language="zh_CN.UTF-8")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"检查点：{shipped_checkpoint}"
    assert "测试准确率：99.64 %（9,964 / 10,000），错误率 0.36 %" in lines
    # the columns line up in a terminal, where each Chinese character takes two columns
    header = f"路由迭代次数 | {' ' * 11}正确 | 测试错误率 | 与 r = 3 不同的答案"
    row = next(line for line in lines if line.startswith(" " * 11 + "1 | "))
    assert header in lines and bars(header) == bars(row) == [13, 31, 44]
    assert "混淆矩阵（行：真实，列：预测）" in lines
    for line in lines[1:]:
        words = set(re.findall(r"[A-Za-z]{2,}", line)) - NAMES
        assert not words, f"English left in {line!r}: {sorted(words)}"
