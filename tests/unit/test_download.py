"""MNIST fetched from torchvision's mirrors, against a local stand-in mirror: good files,
a truncated file, a wrong checksum, a refused connection, a cancel halfway, the CLI."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from capsviz.data import download
from capsviz.data.download import (
    BackgroundDownload,
    DownloadCancelled,
    MnistDownloadError,
    download_mnist,
    missing_archives,
)
from capsviz.data.mnist import MnistNotFoundError, load_mnist
from tests.mirror import Mirror, archives, md5s, refused_url

FILES = archives()
CHECKSUMS = md5s(FILES)


def leftovers(root) -> list[str]:
    raw = root / "MNIST" / "raw"
    return sorted(p.name for p in raw.iterdir()) if raw.is_dir() else []


def test_torchvisions_mirrors_and_checksums_are_the_source():
    mirrors, checksums = download.mnist_sources()
    assert any("lecun.com" in m or "ossci-datasets" in m for m in mirrors)
    assert checksums["t10k-labels-idx1-ubyte.gz"] == "ec29112dd5afa0611ce80d1b7f02629c"
    assert sorted(checksums) == sorted(FILES)


def test_good_files_are_downloaded_checked_and_load(tmp_path):
    seen = []
    with Mirror(FILES) as mirror:
        written = download_mnist(tmp_path, progress=lambda *a: seen.append(a), mirrors=[mirror.url],
                                 checksums=CHECKSUMS)  # fmt: skip
    assert [p.name for p in written] == list(FILES)
    assert leftovers(tmp_path) == sorted(FILES)
    ends = {name: (done, total) for name, done, total in seen}
    assert ends == {name: (len(data), len(data)) for name, data in FILES.items()}
    test = load_mnist(train=False, data_root=tmp_path)
    assert test.images.shape == (10000, 28, 28) and test.labels[:12].tolist() == [*range(10), 0, 1]
    assert not missing_archives(tmp_path)
    assert download_mnist(tmp_path, mirrors=[mirror.url], checksums=CHECKSUMS) == []  # nothing missing


def test_only_the_missing_split_is_fetched(tmp_path):
    with Mirror(FILES) as mirror:
        download_mnist(tmp_path, train=False, mirrors=[mirror.url], checksums=CHECKSUMS)
    assert leftovers(tmp_path) == ["t10k-images-idx3-ubyte.gz", "t10k-labels-idx1-ubyte.gz"]
    assert [r.rsplit("/", 1)[-1] for r in mirror.requests] == leftovers(tmp_path)


@pytest.mark.parametrize("mode", ["truncated", "wrong checksum", "missing"])
def test_a_bad_mirror_leaves_no_file_and_says_where_to_put_them(tmp_path, mode):
    files = dict(FILES)
    name = "train-images-idx3-ubyte.gz"
    if mode == "wrong checksum":
        files[name] = files[name][:-10] + bytes(10)
    with Mirror(files) as mirror:
        if mode != "wrong checksum":
            mirror.mode[name] = mode
        with pytest.raises(MnistDownloadError) as caught:
            download_mnist(tmp_path, mirrors=[mirror.url], checksums=CHECKSUMS)
    message = str(caught.value)
    assert name in message and str(tmp_path / "MNIST" / "raw") in message and "by hand" in message
    assert {"truncated": "closed after", "wrong checksum": "wrong checksum", "missing": "Not Found"}[mode] in message
    assert name not in leftovers(tmp_path) and not any(n.endswith(".part") for n in leftovers(tmp_path))
    with pytest.raises(MnistNotFoundError):  # what is there is never taken as the whole
        load_mnist(train=True, data_root=tmp_path)


def test_a_refused_connection_goes_to_the_next_mirror(tmp_path):
    refused = refused_url()
    with pytest.raises(MnistDownloadError, match="refused"):
        download_mnist(tmp_path, train=False, mirrors=[refused], checksums=CHECKSUMS)
    assert leftovers(tmp_path) == []
    with Mirror(FILES) as mirror:
        download_mnist(tmp_path, train=False, mirrors=[refused, mirror.url], checksums=CHECKSUMS)
    assert load_mnist(train=False, data_root=tmp_path).labels[3] == 3


def test_a_cancel_halfway_keeps_nothing_of_the_file_under_way(tmp_path):
    state = {}
    with Mirror(FILES) as mirror:
        mirror.mode["train-images-idx3-ubyte.gz"] = "slow"

        def progress(name, done, total):
            state["done"] = done

        def cancelled():
            return state.get("done", 0) > 60_000  # in the middle of the first (slow) archive

        with pytest.raises(DownloadCancelled):
            download_mnist(tmp_path, progress=progress, cancelled=cancelled, mirrors=[mirror.url], checksums=CHECKSUMS)
    assert leftovers(tmp_path) == []
    assert 60_000 < state["done"] < len(FILES["train-images-idx3-ubyte.gz"])


def wait_for(download: BackgroundDownload, timeout_s: float = 60) -> None:
    download._thread.join(timeout_s)
    assert not download.running


def test_a_background_download_reports_its_file_and_bytes_and_its_end(tmp_path, monkeypatch):
    with Mirror(FILES) as mirror:
        monkeypatch.setattr(download, "mnist_sources", lambda: ([mirror.url], CHECKSUMS))
        fetch = BackgroundDownload(tmp_path)
        wait_for(fetch)
    assert fetch.error is None and not missing_archives(tmp_path)
    last = list(FILES)[-1]
    assert (fetch.name, fetch.done, fetch.total) == (last, len(FILES[last]), len(FILES[last]))


def test_a_cancelled_background_download_ends_in_download_cancelled(tmp_path, monkeypatch):
    with Mirror(FILES) as mirror:
        monkeypatch.setattr(download, "mnist_sources", lambda: ([mirror.url], CHECKSUMS))
        mirror.mode["train-images-idx3-ubyte.gz"] = "slow"
        fetch = BackgroundDownload(tmp_path)
        fetch.cancel()
        wait_for(fetch)
    assert isinstance(fetch.error, DownloadCancelled) and leftovers(tmp_path) == []
    monkeypatch.setattr(download, "mnist_sources", lambda: ([refused_url()], CHECKSUMS))
    refused = BackgroundDownload(tmp_path)  # no mirror answers: the error is kept for the caller
    wait_for(refused)
    assert isinstance(refused.error, MnistDownloadError)


def test_the_cli_downloads_with_download_and_fails_in_one_line_offline(tmp_path, monkeypatch, capsys):
    from capsviz.cli import main
    from capsviz.commands.common import ensure_mnist

    args = argparse.Namespace(data_root_sub=tmp_path, download_sub=True)
    with Mirror(FILES) as mirror:
        monkeypatch.setattr(download, "mnist_sources", lambda: ([mirror.url], CHECKSUMS))
        ensure_mnist(args, False)
    assert "MNIST" in capsys.readouterr().err  # the progress bar
    assert load_mnist(train=False, data_root=tmp_path).images.shape == (10000, 28, 28)

    monkeypatch.setattr(download, "mnist_sources", lambda: ([refused_url()], CHECKSUMS))
    code = main(["train", "--download", "--data-root", str(tmp_path / "empty"), "--epochs", "1"])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert code == 2 and err.startswith("error: cannot download train-images-idx3-ubyte.gz") and "by hand" in err
    assert np.all([not p.name.endswith(".part") for p in (tmp_path / "empty").rglob("*")])
