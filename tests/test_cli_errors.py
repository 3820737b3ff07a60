"""Every ``jaxarc`` sub-command given bad arguments: a non-zero exit, exactly one line on
stderr naming the flag or value, and never a traceback. Run in-process through
``jaxarc.cli.main.main``.

The decision on argparse errors (documented in :mod:`jaxarc.cli.main`): they are one line
too (``jaxarc train: error: ... (see `jaxarc train --help`)``), without the usage block, and
raise ``SystemExit(2)`` as argparse does.
"""

from __future__ import annotations

import json
import zipfile

import numpy as np
import pytest

from jaxarc.cli.main import main

TASK = {
    "train": [{"input": [[0, 1], [2, 3]], "output": [[3, 2], [1, 0]]}],
    "test": [{"input": [[1, 1]], "output": [[2, 2]]}],
}


@pytest.fixture()
def files(tmp_path, monkeypatch):
    """Bad inputs of every kind, in ``tmp_path`` (also the working directory)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("JAXARC_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "t.json").write_text(json.dumps(TASK))
    (tmp_path / "bad.json").write_text('{"train": [{"input": [[1, 2], [3]]}]}')
    np.save(tmp_path / "array.npy", np.zeros(3))
    (tmp_path / "empty.npz").write_bytes(b"")
    np.savez(tmp_path / "full.npz", a=np.arange(1000))
    (tmp_path / "truncated.npz").write_bytes((tmp_path / "full.npz").read_bytes()[:200])
    (tmp_path / "text.npz").write_text("just some text\n")
    with zipfile.ZipFile(tmp_path / "other.npz", "w") as zf:
        zf.writestr("readme.txt", "a zip without arrays")
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "used" / "checkpoints" / "update_00000001").mkdir(parents=True)
    (tmp_path / "used" / "checkpoints" / "update_00000001" / "meta.json").write_text("{}")
    return tmp_path


def run_cli(argv: list[str], capsys) -> tuple[int, str]:
    """Exit code and stderr of ``jaxarc ARGV`` (argparse errors raise SystemExit)."""
    try:
        code = main(argv)
    except SystemExit as exit_info:
        code = exit_info.code
    return code, capsys.readouterr().err


BAD_ARGUMENTS = [
    # train (--dry-run validates what the run would use)
    (["train", "--source", "no-such-source", "--dry-run"], "no-such-source"),
    (["train", "--canvas", "0", "--dry-run"], "canvas"),
    (["train", "--canvas", "40", "--dry-run"], "canvas"),
    (["train", "--allowed-operations", "99", "--dry-run"], "99"),
    (["train", "--allowed-operations", "-1", "--dry-run"], "-1"),
    (["train", "--source", "arc-agi-1/training", "--dry-run"], "canvas"),
    (["train", "--source", "tasks", "--canvas", "1", "--dry-run"], "canvas"),
    (["train", "--source", "bad.json", "--canvas", "5", "--dry-run"], "bad.json"),
    (["train", "--lr", "fast"], "--lr"),
    (["train", "--no-such-flag"], "--no-such-flag"),
    (["train", "--preset", "huge"], "huge"),
    (["train", "--checkpoint-every", "0"], "--checkpoint-every"),
    (["train", "--run-dir", "used", "--dry-run"], "--resume"),
    # eval
    (["eval"], "--checkpoint"),
    (["eval", "--checkpoint", "ckpt"], "ckpt"),
    (["eval", "--checkpoint", "ckpt", "--attempts", "0"], "--attempts"),
    (["eval", "--baseline", "predictor-rule", "--by-family"], "--by-family"),
    (
        ["eval", "--baseline", "predictor-rule", "--source", "gen/easy", "--min-side", "-3"],
        "--min-side",
    ),
    (
        ["eval", "--baseline", "predictor-rule", "--source", "gen/easy", "--canvas", "256"],
        "--canvas",
    ),
    # data
    (["data"], "ACTION"),
    (["data", "wipe"], "wipe"),
    (["data", "info", "no-such-source"], "no-such-source"),
    (["data", "info", "tasks", "--canvas", "0x5"], "canvas"),
    (["data", "info", "tasks", "--canvas", "2.5x3"], "--canvas"),
    (["data", "info", "tasks", "--canvas", "1x1"], "canvas"),
    (["data", "info", "bad.json"], "bad.json"),
    (["data", "info", "tasks", "--solutions", "nothing.json"], "solutions"),
    (["data", "info", "gen/no-such-family"], "gen/no-such-family"),
    (["data", "fetch", "no-such-dataset"], "no-such-dataset"),
    (["data", "fetch", "miniarc", "--timeout", "-1"], "--timeout"),
    # render
    (["render"], "TASK_ID"),
    (["render", "nosuchtask"], "nosuchtask"),
    (["render", "t", "--source", "no-such-source"], "no-such-source"),
    (["render", "t", "--source", "tasks", "--cell-size", "0"], "--cell-size"),
    (["render", "t", "--source", "tasks", "--cell-size", "100000"], "--cell-size"),
    (["render", "t", "--source", "tasks", "--format", "svg", "--out", "x.png"], "--format svg"),
    (["render", "t", "--source", "tasks", "--format", "ansi", "--out", "x.txt"], "--out"),
    (["render", "t", "--source", "tasks", "--out", "t.gif"], "t.gif"),
    (["render", "t", "--source", "tasks", "--format", "jpeg"], "jpeg"),
    (["render", "t", "--source", "gen/easy"], "gen/easy#<i>"),
    # replay
    (["replay", "missing.npz"], "missing.npz"),
    (["replay", "array.npy"], "array.npy"),
    (["replay", "empty.npz"], "empty.npz"),
    (["replay", "truncated.npz"], "truncated.npz"),
    (["replay", "text.npz"], "text.npz"),
    (["replay", "other.npz"], "other.npz"),
    (["replay", "tasks"], "tasks"),
    # solve
    (["solve", "--source", "no-such-source", "--out", "s.json"], "no-such-source"),
    (["solve", "--source", "bad.json", "--out", "s.json"], "bad.json"),
    (["solve", "--source", "tasks", "--out", "s.json", "--budget", "0"], "--budget"),
    (["solve", "--source", "tasks", "--out", "s.json", "--method", "magic"], "magic"),
    (["solve", "--source", "tasks", "--out", "s.json", "--method", "policy"], "--checkpoint"),
    (
        [
            "solve",
            "--source",
            "tasks",
            "--out",
            "s.json",
            "--method",
            "policy",
            "--checkpoint",
            "ckpt",
        ],
        "ckpt",
    ),
    (["solve", "--source", "gen/easy", "--out", "s.json"], "gen/easy"),
    (["solve", "--source", "tasks"], "--out"),
    # pretrain-programs
    (["pretrain-programs", "--source", "no-such-source", "--run-dir", "p"], "no-such-source"),
    (["pretrain-programs", "--source", "gen/easy", "--run-dir", "p"], "gen/easy"),
    (["pretrain-programs", "--source", "tasks", "--run-dir", "p", "--rounds", "0"], "--rounds"),
    (["pretrain-programs", "--source", "tasks"], "--run-dir"),
    # bench
    (["bench"], "KIND"),
    (["bench", "env", "--batch-sizes", "0"], "--batch-sizes"),
    (["bench", "env", "--formats", "polygon"], "polygon"),
    (["bench", "env", "--steps", "0"], "--steps"),
    (["bench", "env", "--source", "no-such-source"], "no-such-source"),
    (["bench", "env", "--source", "tasks", "--face-envs", "tasks"], "--face-envs"),
    (["bench", "env", "--source", "tasks", "--face-envs", ","], "--face-envs"),
    (["bench", "train", "--updates", "0"], "--updates"),
    (["bench", "train", "--batch-tasks", "x"], "--batch-tasks"),
    (["bench", "train", "--preset", "huge"], "huge"),
]


@pytest.mark.parametrize(
    ("argv", "named"), BAD_ARGUMENTS, ids=[" ".join(a) for a, _ in BAD_ARGUMENTS]
)
def test_bad_arguments_fail_with_one_line_and_no_traceback(files, capsys, argv, named):
    code, err = run_cli(argv, capsys)
    lines = err.strip().splitlines()
    assert code not in (0, None), err
    assert len(lines) == 1, err
    assert "Traceback" not in err and "internal error" not in err, err
    assert lines[0].startswith("jaxarc"), err
    assert named in lines[0], err


def test_every_subcommand_is_covered():
    from jaxarc.cli.main import build_parser

    parser = build_parser()
    (commands,) = [a for a in parser._actions if a.dest == "command"]
    covered = {argv[0] for argv, _ in BAD_ARGUMENTS}
    assert set(commands.choices) <= covered


@pytest.mark.parametrize("name", ["array.npy", "empty.npz", "truncated.npz", "text.npz"])
def test_episode_record_load_names_a_file_that_is_not_an_archive(files, name):
    from jaxarc.render import EpisodeRecord

    with pytest.raises(ValueError, match="not a complete .npz archive"):
        EpisodeRecord.load(files / name)
