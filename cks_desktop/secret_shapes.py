"""What a secret looks like: by its name, by its shape, and how to blank it out of text.

Secrets hide in more places than ``*_TOKEN`` variables: ``--api-key sk-…`` in a
server's arguments, ``?api_key=`` or ``user:pass@`` in a URL, ``DATABASE_URL``,
``SLACK_WEBHOOK_URL``, ``MY_PASS``, ``PRIVATE_PEM``, ``DSN``. Names are matched
by word (``MY_PASS`` but not ``COMPASS``) and by the long words anywhere
(``…TOKEN…``); values are matched by the shapes of well-known credentials
(``sk-…``, ``ghp_…``, ``xox…``, ``AIza…``, ``AKIA…``, JWTs, PEM blocks, URLs with
credentials) and, for long unbroken strings, by their entropy. A URL's path segments are
checked one by one (``/mcp/sk-live-…/sse``: a key in the path, as some hosted servers want it).

A false positive only means a harmless value is kept in the keychain and shown
as ``[secret]``; a false negative leaks. The rules lean to the first.

Qt-free and dependency-free: the CLI, the MCP config and the crash log use it.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable
from urllib.parse import parse_qsl, urlsplit

REDACTED = "[redacted]"

# Anywhere in a name (the historic rule of config.looks_secret).
_NAME_PARTS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "AUTH", "WEBHOOK", "PRIVATE",
               "COOKIE", "SIGNATURE", "CONNECTION_STRING", "CONNSTR")
# Whole words of a name (split at _ - . and spaces), so MY_PASS matches and COMPASS does not.
_NAME_WORDS = frozenset({"PASS", "PWD", "PW", "DSN", "PEM", "SIG", "CREDS", "CRED", "SALT",
                         "P12", "PFX", "JWT", "BEARER", "OTP", "PIN"})
# A URL/URI variable for one of these is a connection string, which carries credentials.
_URL_WORDS = frozenset({"URL", "URI", "DSN"})
_CONNECTION_WORDS = frozenset({"DATABASE", "DB", "POSTGRES", "POSTGRESQL", "PG", "MYSQL", "MARIADB", "MONGO",
                               "MONGODB", "REDIS", "AMQP", "RABBITMQ", "KAFKA", "SQL", "SQLALCHEMY", "WEBHOOK",
                               "SENTRY", "ELASTIC", "ELASTICSEARCH", "SMTP", "FTP", "S3"})
_SECRET_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key",
                             "api-key", "x-auth-token", "x-access-token"})

_SHAPES = [
    re.compile(r"sk-ant-[A-Za-z0-9_\-]{8,}"),
    re.compile(r"\bsk-(?:proj-|live-|test-)?[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}"),
    re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"),
    re.compile(r"\bglpat-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{20,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    re.compile(r"\bnpm_[A-Za-z0-9]{30,}"),
    re.compile(r"\bhf_[A-Za-z0-9]{30,}"),
    re.compile(r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),  # a JWT
    re.compile(r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+"),
    re.compile(r"https://discord(?:app)?\.com/api/webhooks/[A-Za-z0-9/_\-]+"),
]
_PEM = re.compile(r"-----BEGIN [A-Z0-9 ]*(?:PRIVATE KEY|CERTIFICATE|SECRET)[A-Z0-9 ]*-----"
                  r"(?:.*?-----END [A-Z0-9 ]+-----)?", re.S)
# scheme://user:password@host — the password part.
_URL_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://[^\s/:@]*:)([^\s/@]+)(@)")
# ?api_key=… &token=… in any text.
_QUERY_SECRET = re.compile(r"(?i)([?&;](?:[a-z0-9_\-]*(?:key|token|secret|password|passwd|pass|pwd|sig|"
                           r"signature|auth|credential|session|code)[a-z0-9_\-]*)=)([^&#\s\"']+)")
# key=value / "key": "value" / Bearer … in free text (log lines).
_ASSIGNMENT = re.compile(r"(?i)((?:api[_-]?key|token|secret|password|passwd|authorization)[\"']?\s*[:=]\s*"
                         r"[\"']?)[^\s\"',}&\[]{4,}")
_BEARER = re.compile(r"(?i)((?:bearer|basic)\s+)[A-Za-z0-9._\-~+/=]{8,}")
_HIGH_ENTROPY_CHARS = re.compile(r"[A-Za-z0-9+/=_\-.]{32,}")
# A URL path segment that starts like a known credential (shorter than the free-text shapes ask:
# in a path, ``sk-live-abc123`` is a key, not a word).
_SEGMENT_PREFIX = re.compile(r"(?:sk-|sk_|rk_|pk_live_|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|glpat-|"
                             r"xox[abposr]-|AKIA|ASIA|AIza|hf_|npm_)[A-Za-z0-9_\-]{6,}")
_SEGMENT_TOKEN = re.compile(r"[A-Za-z0-9_\-~.]{24,}")
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# scheme://host then the path (up to the query, fragment or the end of the URL in text).
_URL_PATH = re.compile(r"(?i)(\b[a-z][a-z0-9+.\-]*://[^\s/?#\"'<>]+)(/[^\s?#\"'<>]*)")


def _words(name: str) -> list[str]:
    # camelCase → camel_Case, then split on separators.
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name.strip())
    return [w for w in re.split(r"[_\-.\s]+", spaced.upper()) if w]


def name_looks_secret(name: str) -> bool:
    """Whether a variable, header, flag or query parameter *name* suggests a secret value."""
    if not isinstance(name, str) or not name.strip():
        return False
    bare = name.strip().lstrip("-")
    if bare.lower() in _SECRET_HEADERS:
        return True
    upper = bare.upper().replace("-", "_")
    if any(part in upper for part in _NAME_PARTS):
        return True
    words = set(_words(bare))
    if words & _NAME_WORDS:
        return True
    return bool(words & _URL_WORDS and words & _CONNECTION_WORDS) or upper in ("DSN", "DATABASE_URL")


def _entropy(text: str) -> float:
    counts = Counter(text)
    return -sum(c / len(text) * math.log2(c / len(text)) for c in counts.values())


def _high_entropy(token: str) -> bool:
    """A long unbroken random-looking string (a key with no known prefix)."""
    if len(token) < 32 or not _HIGH_ENTROPY_CHARS.fullmatch(token):
        return False
    if token.startswith(("/", "~", ".", "@")) or "//" in token or token.count("/") > 2 or token.count(".") > 2:
        return False  # paths, package names, domain names
    has = [any(c.islower() for c in token), any(c.isupper() for c in token), any(c.isdigit() for c in token)]
    if sum(has) < 2:
        return False
    return _entropy(token) >= 4.0


def path_segment_looks_secret(segment: str) -> bool:
    """Whether one segment of a URL's path is a credential (``/mcp/sk-live-…/sse``).

    A known prefix, any credential shape, or a long random-looking token (24+ characters of
    mixed letters and digits; a UUID is an id, not a secret). Words, numbers, dates and
    ordinary names stay readable."""
    from urllib.parse import unquote

    segment = unquote(segment)
    if len(segment) < 8:
        return False
    if _SEGMENT_PREFIX.fullmatch(segment) or value_looks_secret(segment):
        return True
    if not _SEGMENT_TOKEN.fullmatch(segment) or _UUID.fullmatch(segment):
        return False
    has = [any(c.islower() for c in segment), any(c.isupper() for c in segment), any(c.isdigit() for c in segment)]
    return sum(has) >= 2 and any(c.isdigit() for c in segment) and _entropy(segment) >= 3.5


def redact_url_paths(text: str) -> str:
    """``text`` with the secret-looking path segments of every URL in it replaced by ``[redacted]``."""
    def path(match: re.Match[str]) -> str:
        segments = match.group(2).split("/")
        return match.group(1) + "/".join(REDACTED if path_segment_looks_secret(s) else s for s in segments)

    return _URL_PATH.sub(path, text)


def url_has_credentials(value: str) -> bool:
    """A URL with ``user:password@`` or a secret-named query parameter."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    if not parts.scheme or not parts.netloc:
        return False
    if parts.password:
        return True
    if any(path_segment_looks_secret(segment) for segment in parts.path.split("/")):
        return True
    try:
        pairs = parse_qsl(parts.query, keep_blank_values=True)
    except ValueError:
        return False
    return any(name_looks_secret(k) and v for k, v in pairs)


def value_looks_secret(value: str) -> bool:
    """Whether a value has the shape of a credential (whatever it is named)."""
    if not isinstance(value, str) or len(value) < 8:
        return False
    if any(p.search(value) for p in _SHAPES) or _PEM.search(value):
        return True
    if "://" in value and url_has_credentials(value.strip()):
        return True
    return any(_high_entropy(token) for token in re.split(r"[\s=:,;\"']+", value))


def looks_secret(name: str, value: str | None = None) -> bool:
    """By name, or (when ``value`` is given) by the value's shape."""
    return name_looks_secret(name) or (value is not None and value_looks_secret(value))


def redact_text(text: str, known: Iterable[str] = ()) -> str:
    """``text`` with known secret values and secret-shaped strings replaced by ``[redacted]``."""
    for value in sorted({v for v in known if v and len(v) >= 4}, key=len, reverse=True):
        text = text.replace(value, REDACTED)
    text = _PEM.sub(REDACTED, text)
    text = redact_url_paths(text)
    for pattern in _SHAPES:
        text = pattern.sub(REDACTED, text)
    text = _URL_USERINFO.sub(lambda m: m.group(1) + REDACTED + m.group(3), text)
    text = _QUERY_SECRET.sub(lambda m: m.group(1) + REDACTED, text)
    text = _BEARER.sub(lambda m: m.group(1) + REDACTED, text)
    text = _ASSIGNMENT.sub(lambda m: m.group(1) + REDACTED, text)
    return re.sub(r"[A-Za-z0-9+/=_\-.]{32,}", lambda m: REDACTED if _high_entropy(m.group(0)) else m.group(0),
                  text)
