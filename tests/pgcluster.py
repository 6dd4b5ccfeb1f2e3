"""A throw-away PostgreSQL cluster for tests and benchmarks: the real server, not a fake.

Why a module of its own: the pytest fixtures (``tests/pg/conftest.py``,
``tests/graph/conftest.py``) and ``bench/graph_store.py`` all need the same
thing — ``initdb`` into a temporary directory, ``pg_ctl -w start`` on 127.0.0.1
and a free port, ``pg_ctl -w stop`` at the end.

CI runs as root and ``initdb`` refuses root, so as root the cluster runs as the
Debian package's ``postgres`` user through ``runuser`` (its directory is handed
to that user first). As anyone else it simply runs as the current user. No
fixed sleeps: ``pg_ctl -w`` waits until the server accepts connections, with a
bounded timeout (``-t``).
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

START_TIMEOUT_S = 60  # a loaded CI machine; pg_ctl returns as soon as the server is up
SUPERUSER = "postgres"


def find_bin_dir() -> Path | None:
    """Where ``initdb``/``pg_ctl``/``postgres`` live, or None (then PostgreSQL tests skip)."""
    env = os.environ.get("CKS_PG_BIN")
    candidates = [Path(env)] if env else []
    initdb = shutil.which("initdb")
    if initdb:
        candidates.append(Path(os.path.realpath(initdb)).parent)
    candidates += [Path(p) for p in sorted(glob.glob("/usr/lib/postgresql/*/bin"), reverse=True)]
    for d in candidates:
        if all((d / name).is_file() for name in ("initdb", "pg_ctl", "postgres")):
            return d
    return None


def missing_reason() -> str | None:
    """Why no cluster can start here (one sentence), or None when it can."""
    if find_bin_dir() is None:
        return ("PostgreSQL's server binaries (initdb, pg_ctl, postgres) are not installed; "
                "run scripts/system-deps.sh test (Debian package postgresql)")
    if os.geteuid() == 0 and shutil.which("runuser") is None:
        return "running as root needs runuser to start PostgreSQL as an unprivileged user"
    if os.geteuid() == 0:
        import pwd

        try:
            pwd.getpwnam("postgres")
        except KeyError:
            return "running as root needs the unprivileged user 'postgres' (Debian package postgresql)"
    return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Cluster:
    """A running cluster; ``dsn(dbname)`` connects as the superuser (trust on 127.0.0.1)."""

    bin_dir: Path
    root: Path
    port: int
    host: str = "127.0.0.1"
    _as_user: list[str] = field(default_factory=list)

    @property
    def data(self) -> Path:
        return self.root / "data"

    def dsn(self, dbname: str = "postgres", user: str = SUPERUSER) -> str:
        return f"postgresql://{user}@{self.host}:{self.port}/{dbname}"

    def _run(self, *args: str, timeout: float = START_TIMEOUT_S + 10) -> None:
        result = subprocess.run([*self._as_user, *args], capture_output=True, text=True, timeout=timeout)
        if result.returncode != 0:
            log = (self.root / "log").read_text(errors="replace")[-2000:] if (self.root / "log").exists() else ""
            raise RuntimeError(f"{' '.join(args[:2])} failed ({result.returncode}): {result.stderr.strip()}\n{log}")

    def pause(self) -> None:
        """Stop the server but keep its data (``resume`` starts it again on the same port)."""
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                  "-t", str(START_TIMEOUT_S), "stop")

    def resume(self) -> None:
        """Start a paused server again: the same data, the same port."""
        self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-o", self.options(), "-l",
                  str(self.root / "log"), "-w", "-t", str(START_TIMEOUT_S), "start")

    def options(self) -> str:
        return (f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200")

    def stop(self) -> None:
        if (self.data / "postmaster.pid").exists():
            self._run(str(self.bin_dir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-w",
                      "-t", str(START_TIMEOUT_S), "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def start_cluster() -> Cluster:
    """initdb + pg_ctl start in a fresh temporary directory (RuntimeError when it fails)."""
    reason = missing_reason()
    if reason is not None:
        raise RuntimeError(reason)
    bin_dir = find_bin_dir()
    assert bin_dir is not None
    root = Path(tempfile.mkdtemp(prefix="cks-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:
        shutil.chown(root, user="postgres")
        os.chmod(root, 0o700)
        as_user = ["runuser", "-u", "postgres", "--"]
    cluster = Cluster(bin_dir, root, free_port(), _as_user=as_user)
    try:
        cluster._run(str(bin_dir / "initdb"), "-D", str(cluster.data), "-A", "trust", "-U", SUPERUSER,
                     "-E", "UTF8", "--locale=C.UTF-8", "--no-sync")
        cluster.resume()
    except BaseException:
        try:
            cluster.stop()
        finally:
            shutil.rmtree(root, ignore_errors=True)
        raise
    return cluster


# -- one cluster per test process, shared by every suite that asks for it ---------------------

_shared: Cluster | None = None
_users = 0
_counter = 0
TEMPLATE = "cks_template"


def acquire() -> Cluster:
    """The process's cluster (started on first use, with a migrated template database)."""
    global _shared, _users
    if _shared is None:
        import atexit

        import psycopg

        from cks_desktop.graph.pg import schema as pg_schema

        cluster = start_cluster()
        atexit.register(cluster.stop)  # a safety net; ``release`` normally stops it first
        with psycopg.connect(cluster.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE DATABASE {TEMPLATE}")
        with psycopg.connect(cluster.dsn(TEMPLATE), autocommit=True) as conn:
            pg_schema.migrate(conn, "template")
        _shared = cluster
    _users += 1
    return _shared


def release() -> None:
    global _shared, _users
    _users -= 1
    if _users <= 0 and _shared is not None:
        cluster, _shared = _shared, None
        cluster.stop()


def new_database(cluster: Cluster, migrated: bool = True) -> str:
    """A fresh database (a copy of the migrated template, or empty); returns its name."""
    import psycopg

    global _counter
    _counter += 1
    name = f"t{os.getpid()}_{_counter}"
    with psycopg.connect(cluster.dsn(), autocommit=True) as conn:
        conn.execute(f"CREATE DATABASE {name}" + (f" TEMPLATE {TEMPLATE}" if migrated else ""))
    return name


def drop_database(cluster: Cluster, name: str) -> None:
    import psycopg

    with psycopg.connect(cluster.dsn(), autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
