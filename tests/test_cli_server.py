"""The ``cli`` fixture's fork server answers as a fresh console-script process would."""

from __future__ import annotations

import subprocess

import pytest


@pytest.mark.parametrize(
    "args",
    [("cite", "icl-order"), ("ph-dgn", "energy", "--steps", "0"), ("no-such-command",)],
)
def test_fork_server_gives_what_a_fresh_process_gives(cli, _cli_server, args):
    if _cli_server is None:
        pytest.skip("the fork server is off (ICLR25_TEST_FORK=0)")
    forked = cli(*args)
    fresh = cli(*args, fresh=True)
    assert (forked.returncode, forked.stdout, forked.stderr) == (
        fresh.returncode,
        fresh.stdout,
        fresh.stderr,
    )


def test_fork_server_kills_a_call_past_its_timeout_and_keeps_serving(cli, _cli_server):
    if _cli_server is None:
        pytest.skip("the fork server is off (ICLR25_TEST_FORK=0)")
    with pytest.raises(subprocess.TimeoutExpired):
        cli("ph-dgn", "energy", "--distance", "200", "--steps", "100000", timeout=0.5)
    assert cli("cite", "icl-order").returncode == 0
