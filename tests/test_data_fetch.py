"""``fetch_dataset`` / ``jaxarc data fetch`` against an HTTP server on 127.0.0.1 (never the net)."""

from __future__ import annotations

import functools
import http.server
import socket
import threading
import zipfile
from pathlib import Path

import pytest

from jaxarc.cli.main import main
from jaxarc.data import FetchError, bank_to_json, fetch_dataset, list_sources, load_bank
from jaxarc.data.fetch import MARKER_FILE, dataset_dir, datasets_dir, is_fetched


def _zip_tree(source: Path, archive: Path, top: str, under: str = "") -> None:
    """Zip ``source`` as GitHub does: everything inside one ``top/`` folder."""
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in sorted(source.rglob("*")):
            if path.is_file():
                zf.write(path, f"{top}/{under}{path.relative_to(source).as_posix()}")


@pytest.fixture(scope="module")
def server(tmp_path_factory, miniarc_dir, conceptarc_dir):
    """Serves ``miniarc.zip`` (GitHub layout), ``wrong.zip`` (no MiniARC folder),
    ``evil.zip`` (a path escaping the folder) and ``notzip.zip`` on an ephemeral port."""
    root = tmp_path_factory.mktemp("www")
    _zip_tree(miniarc_dir, root / "miniarc.zip", "MINI-ARC-master")
    _zip_tree(conceptarc_dir / "MinimalTasks", root / "wrong.zip", "MINI-ARC-master", "other/")
    with zipfile.ZipFile(root / "evil.zip", "w") as zf:
        zf.writestr("MINI-ARC-master/../../evil.json", "{}")
    (root / "notzip.zip").write_text("<html>not a zip</html>")
    handler = functools.partial(_QuietHandler, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format, *args):  # keep test output clean
        pass


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    path = tmp_path / "cache"
    monkeypatch.setenv("JAXARC_CACHE_DIR", str(path))
    for proxy in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY"):
        monkeypatch.delenv(proxy, raising=False)  # 127.0.0.1 must be reached directly
    return path


def _no_leftovers() -> None:
    """A failed fetch leaves neither the dataset nor temporary folders."""
    if datasets_dir().exists():
        assert [p.name for p in datasets_dir().iterdir()] == []


def test_fetch_then_load_by_name(server, miniarc_dir, cache_dir):
    with pytest.raises(FileNotFoundError, match="jaxarc data fetch miniarc"):
        load_bank("miniarc", canvas_shape=(5, 5))
    path = fetch_dataset("miniarc", url=f"{server}/miniarc.zip")
    assert path == cache_dir / "datasets" / "miniarc" and is_fetched("miniarc")
    assert (path / "data" / "MiniARC").is_dir() and (path / MARKER_FILE).is_file()
    assert [p.name for p in datasets_dir().iterdir()] == ["miniarc"]  # no temp dirs left

    fetched = load_bank("miniarc", canvas_shape=(5, 5))
    assert fetched.num_tasks == 149
    assert bank_to_json(fetched) == bank_to_json(load_bank(miniarc_dir, canvas_shape=(5, 5)))
    assert load_bank("fetched/miniarc", canvas_shape=(5, 5)).task_ids == fetched.task_ids
    assert "fetched/miniarc" in list_sources()


def test_refetch_keeps_or_replaces_the_copy(server):
    path = fetch_dataset("miniarc", url=f"{server}/miniarc.zip")
    extra = path / "stale.txt"
    extra.write_text("from an older fetch")
    assert fetch_dataset("miniarc", url=f"{server}/miniarc.zip") == path
    assert extra.exists()  # kept without force
    fetch_dataset("miniarc", url=f"{server}/miniarc.zip", force=True)
    assert not extra.exists() and is_fetched("miniarc")
    assert [p.name for p in datasets_dir().iterdir()] == ["miniarc"]


def test_http_error_is_clear(server):
    with pytest.raises(FetchError, match="HTTP 404"):
        fetch_dataset("miniarc", url=f"{server}/missing.zip")
    _no_leftovers()


def test_offline_is_clear():
    with socket.socket() as sock:  # a port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(FetchError, match="are you offline"):
        fetch_dataset("miniarc", url=f"http://127.0.0.1:{port}/miniarc.zip", timeout=5)
    _no_leftovers()


@pytest.mark.parametrize(
    ("archive", "problem"),
    [
        ("notzip.zip", "not a valid zip archive"),
        ("wrong.zip", "lacks the task folders"),
        ("evil.zip", "refusing unsafe path"),
    ],
)
def test_bad_archives_are_rejected(server, archive, problem):
    with pytest.raises(FetchError, match=problem):
        fetch_dataset("miniarc", url=f"{server}/{archive}")
    _no_leftovers()
    assert not dataset_dir("miniarc").exists()


def test_failed_refetch_keeps_the_old_copy(server):
    fetch_dataset("miniarc", url=f"{server}/miniarc.zip")
    with pytest.raises(FetchError):
        fetch_dataset("miniarc", url=f"{server}/wrong.zip", force=True)
    assert is_fetched("miniarc")
    assert load_bank("miniarc", canvas_shape=(5, 5)).num_tasks == 149


def test_unknown_dataset():
    with pytest.raises(FetchError, match="unknown dataset 'nope'; fetchable: conceptarc"):
        fetch_dataset("nope")


def test_cli_fetch(server, capsys, cache_dir):
    assert main(["data", "fetch", "miniarc", "--url", f"{server}/miniarc.zip"]) == 0
    out = capsys.readouterr().out
    assert str(cache_dir / "datasets" / "miniarc") in out and "fetched/miniarc" in out

    assert main(["data", "list"]) == 0
    out = capsys.readouterr().out
    assert "fetched/miniarc" in out and "149 tasks" in out

    assert main(["data", "fetch", "miniarc", "--url", f"{server}/missing.zip", "--force"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("jaxarc: error: ") and "HTTP 404" in err
    assert main(["data", "fetch", "nope"]) == 2
    assert "unknown dataset 'nope'" in capsys.readouterr().err
