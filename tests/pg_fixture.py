"""A throwaway PostgreSQL server for tests: ``initdb`` + ``pg_ctl`` in a temp dir on a free loopback port.

Used by the ``pg_server`` fixture in ``conftest.py`` (store tests, PostgreSQL-table sources).
PostgreSQL refuses to run as root, so when the tests run as root (CI does) the server runs as the
``postgres`` system user (created by Debian's ``postgresql`` package, which ``.ci/run`` installs)
through ``runuser``.  Authentication is ``trust`` on 127.0.0.1 only; the server lives as long as
the test session and its directory is removed afterwards.
"""
from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

SUPERUSER = "dpcore"


def find_bin() -> Path | None:
    """Folder holding ``initdb`` and ``pg_ctl``, or None when PostgreSQL is not installed."""
    exe = shutil.which("initdb")
    if exe and shutil.which("pg_ctl"):
        return Path(os.path.realpath(exe)).parent
    cands = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4]))
    return Path(cands[-1]).parent if cands else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PgServer:
    """A running throwaway server.  ``url(db)`` gives a SQLAlchemy URL; ``new_database()`` a fresh one."""

    def __init__(self, bindir: Path, base: Path, port: int, runas: str | None):
        self.bindir, self.base, self.port, self.runas = bindir, base, port, runas
        self.data = base / "data"
        self.log = base / "server.log"

    def _run(self, *args, timeout=120):
        cmd = [str(a) for a in args]
        if self.runas:
            cmd = ["runuser", "-u", self.runas, "--"] + cmd
        # cwd: the server's own folder, which the unprivileged user can enter (the checkout may not be).
        return subprocess.run(cmd, check=True, capture_output=True, text=True, timeout=timeout, cwd=self.base)

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def new_database(self, prefix: str = "t") -> str:
        """Create an empty database and return its URL."""
        import psycopg
        name = f"{prefix}_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(f"host=127.0.0.1 port={self.port} user={SUPERUSER} dbname=postgres",
                             autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def start(self):
        self._run(self.bindir / "initdb", "-D", self.data, "-U", SUPERUSER, "-A", "trust", "-E", "UTF8",
                  "--no-sync")
        opts = f"-h 127.0.0.1 -p {self.port} -k {self.base} -c fsync=off -c max_connections=60"
        self._run(self.bindir / "pg_ctl", "-D", self.data, "-l", self.log, "-o", opts, "-w", "-t", "60", "start")

    def stop(self):
        try:
            self._run(self.bindir / "pg_ctl", "-D", self.data, "-m", "immediate", "-w", "stop", timeout=60)
        except (subprocess.SubprocessError, OSError):
            pass
        shutil.rmtree(self.base, ignore_errors=True)


def start_server() -> PgServer:
    """Start a server; raises RuntimeError with the reason if PostgreSQL is missing or fails to start."""
    bindir = find_bin()
    if bindir is None:
        raise RuntimeError("PostgreSQL's initdb/pg_ctl not found: install Debian's postgresql (.ci/run does)")
    runas = None
    if os.geteuid() == 0:
        try:
            pwd.getpwnam("postgres")
        except KeyError as exc:
            raise RuntimeError("running as root and there is no 'postgres' user to run the server as") from exc
        runas = "postgres"
    base = Path(tempfile.mkdtemp(prefix="dpcore-pg-", dir="/tmp"))
    if runas:
        pw = pwd.getpwnam(runas)
        os.chown(base, pw.pw_uid, pw.pw_gid)
    last = None
    for _ in range(3):  # the free port may be taken between probing and binding
        server = PgServer(bindir, base, _free_port(), runas)
        try:
            server.start()
            return server
        except subprocess.CalledProcessError as exc:
            last = (exc.stderr or "") + (server.log.read_text() if server.log.exists() else "")
            subprocess.run((["runuser", "-u", runas, "--"] if runas else []) +
                           [str(bindir / "pg_ctl"), "-D", str(server.data), "-m", "immediate", "stop"],
                           capture_output=True, cwd=base)
            shutil.rmtree(server.data, ignore_errors=True)
            time.sleep(0.5)
    shutil.rmtree(base, ignore_errors=True)
    raise RuntimeError(f"the throwaway PostgreSQL server did not start:\n{last[-2000:] if last else ''}")
