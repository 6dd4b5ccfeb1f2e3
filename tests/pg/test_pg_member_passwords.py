"""``team init``'s member passwords reach the server only as SCRAM verifiers.

The admin role here has ``log_statement = all`` (a real server's setting, as an
auditing deployment would have it); the server's own log is then read back:
the password is nowhere in it, and the verifier the server stored is the one
for that password (checked by recomputing RFC 5802's keys from its salt).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os

import psycopg

from cks_desktop.graph.pg.team import init_team
from tests import pgcluster

SECRET = "Corr3ct-Horse-battery-7"


def _verifies(verifier: str, password: str) -> bool:
    """RFC 5802 / 7677: ``SCRAM-SHA-256$<iterations>:<salt>$<StoredKey>:<ServerKey>``."""
    method, rest = verifier.split("$", 1)
    iterations_salt, keys = rest.split("$")
    iterations, salt = iterations_salt.split(":")
    stored_key, server_key = (base64.b64decode(k) for k in keys.split(":"))
    salted = hashlib.pbkdf2_hmac("sha256", password.encode(), base64.b64decode(salt), int(iterations))
    client_key = hmac.digest(salted, b"Client Key", "sha256")
    return (method == "SCRAM-SHA-256" and hashlib.sha256(client_key).digest() == stored_key
            and hmac.digest(salted, b"Server Key", "sha256") == server_key)


def test_member_passwords_reach_the_server_only_as_scram_verifiers(pg_cluster: pgcluster.Cluster) -> None:
    name = f"scram_{os.getpid()}"
    log = pg_cluster.root / "log"
    with psycopg.connect(pg_cluster.dsn(), autocommit=True) as su:
        if su.execute("SELECT 1 FROM pg_roles WHERE rolname = 'logged_admin'").fetchone() is None:
            su.execute("CREATE ROLE logged_admin LOGIN SUPERUSER")
        su.execute("ALTER ROLE logged_admin SET log_statement = 'all'")
    logged_from = log.stat().st_size
    try:
        init_team(pg_cluster.dsn(name, user="logged_admin"), {"scram_ann": SECRET, "scram_bo": None})
        with psycopg.connect(pg_cluster.dsn(), autocommit=True) as su:
            rows = su.execute("SELECT rolname, rolpassword FROM pg_authid WHERE rolname LIKE 'scram_%%'").fetchall()
        stored: dict[str, str | None] = dict(rows)
        with log.open("rb") as f:
            f.seek(logged_from)
            logged = f.read().decode("utf-8", "replace")
        assert SECRET not in logged  # the password is in no statement the server logged …
        assert 'ALTER ROLE "scram_ann" PASSWORD \'SCRAM-SHA-256$' in logged  # … though this one was logged
        assert stored["scram_bo"] is None
        assert _verifies(str(stored["scram_ann"]), SECRET) and not _verifies(str(stored["scram_ann"]), SECRET + "x")
    finally:
        pgcluster.drop_database(pg_cluster, name)
        with psycopg.connect(pg_cluster.dsn(), autocommit=True) as su:
            su.execute("ALTER ROLE logged_admin RESET log_statement")
