"""The runtime-directory rule and the listener's uid (`slmactor.peer`), on real directories and
real unix sockets."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from slmactor import peer


def test_only_a_private_directory_of_ours_passes(tmp_path: Path) -> None:
    ours = tmp_path / "rt"
    ours.mkdir(mode=0o700)
    assert peer.runtime_dir_problem(str(ours)) == ""
    assert peer.runtime_dir_problem(str(tmp_path / "missing")) == ""  # nothing can listen there
    ours.chmod(0o755)  # readable: nobody else can bind or connect in it
    assert peer.runtime_dir_problem(str(ours)) == ""
    for mode in (0o770, 0o703, 0o1777):
        ours.chmod(mode)
        assert f"writable by other users (mode {mode:o})" in peer.runtime_dir_problem(str(ours))
    ours.chmod(0o700)
    link = tmp_path / "link"
    link.symlink_to(ours)
    assert "symlink" in peer.runtime_dir_problem(str(link))
    plain = tmp_path / "file"
    plain.write_text("")
    assert "not a directory" in peer.runtime_dir_problem(str(plain))
    other = os.getuid() + 1
    problem = peer.runtime_dir_problem(str(ours), uid=other)
    assert f"owned by uid {os.getuid()}, not by you (uid {other})" in problem
    assert "SLMACTOR_RUNTIME_DIR" in problem and "\n" not in problem


def test_the_listener_uid_is_read_without_sending_anything(tmp_path: Path) -> None:
    path = tmp_path / "ctl.sock"
    assert peer.listener_uid(str(path)) == peer.NOBODY  # no socket file
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    assert peer.listener_uid(str(path)) == peer.NOBODY  # bound, not listening: refused, as after a crash
    server.listen(1)
    try:
        assert peer.listener_uid(str(path)) == os.getuid()
        conn, _ = server.accept()
        conn.settimeout(1.0)
        assert conn.recv(16) == b""  # the probe closed without a byte
        conn.close()
    finally:
        server.close()
    assert peer.peer_problem(str(path), os.getuid()) == ""
    assert peer.peer_problem(str(path), peer.NOBODY) == ""
    assert "process of uid 4242" in peer.peer_problem(str(path), 4242, uid=1000)


@pytest.mark.skipif(not os.path.exists("/proc/self"), reason="Linux backlog semantics")
def test_a_full_backlog_is_busy_not_dead(tmp_path: Path) -> None:
    path = tmp_path / "ctl.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(0)
    waiting = []
    try:
        for _ in range(4):  # fill the backlog without accepting
            client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            client.setblocking(False)
            try:
                client.connect(str(path))
            except BlockingIOError:
                client.close()
                break
            waiting.append(client)
        assert peer.listener_uid(str(path), timeout=0.05) == peer.BUSY
    finally:
        for client in waiting:
            client.close()
        server.close()
