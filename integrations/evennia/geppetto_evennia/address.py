"""One Redis for the game and geppetto: the address the game's bus uses, read from geppetto's
own config file when the game names it (GEPPETTO_CONFIG), so both sides read one address;
GEPPETTO_REDIS_URL, if also set, must name the same Redis.

Nothing here needs Evennia: `redis_url(settings)` takes any object with the settings as
attributes.
"""
import os
import tomllib
from pathlib import Path
from urllib.parse import quote, unquote, urlsplit

#: geppetto's defaults for what the game reads of its config (config/geppetto.toml).
DEFAULT_URL = "redis://127.0.0.1:6379/"
DEFAULT_PASSWORD_ENV = "GEPPETTO_REDIS_PASSWORD"


class AddressError(ValueError):
    """The game's and geppetto's Redis cannot be told, or differ."""


def redis_url(settings):
    """The Redis URL of the game's bus: geppetto's `[bus.redis]` address from the file
    GEPPETTO_CONFIG names (relative to GAME_DIR), else GEPPETTO_REDIS_URL, else geppetto's
    default. Raises AddressError when both are given and name different Redis servers."""
    mine = getattr(settings, "GEPPETTO_REDIS_URL", None)
    config = getattr(settings, "GEPPETTO_CONFIG", None)
    if not config:
        return mine or DEFAULT_URL
    path = Path(config).expanduser()
    if not path.is_absolute():
        path = Path(getattr(settings, "GAME_DIR", ".")) / path
    theirs = geppetto_redis_url(path)
    if mine and same_redis(mine) != same_redis(theirs):
        raise AddressError(f"GEPPETTO_REDIS_URL ({hide(mine)}) is not the Redis geppetto uses "
                           f"({hide(theirs)}, [bus.redis] in {path}): the game and geppetto must "
                           "share one Redis; leave GEPPETTO_REDIS_URL out and GEPPETTO_CONFIG gives it")
    return theirs


def geppetto_redis_url(path):
    """The Redis URL a `geppetto serve --config <path>` uses: `[bus.redis] url` with the
    password from `password_file` (relative to the config) or the variable `password_env`, as
    geppetto applies them. Raises AddressError when the file cannot give one a game can use."""
    try:
        with open(path, "rb") as file:
            config = tomllib.load(file)
    except OSError as error:
        raise AddressError(f"GEPPETTO_CONFIG: cannot read geppetto's config {path}: {error.strerror}") from error
    except tomllib.TOMLDecodeError as error:
        raise AddressError(f"GEPPETTO_CONFIG: {path} is not TOML: {error}") from error
    bus = config.get("bus", {})
    kind = bus.get("kind", "memory")
    if kind != "redis":
        raise AddressError(f"geppetto's config {path} runs the in-process bus ([bus] kind = {kind!r}): "
                           "no game can reach it; serve with a config whose [bus] kind is \"redis\"")
    redis_section = bus.get("redis", {})
    if redis_section.get("cluster_nodes"):
        raise AddressError(f"geppetto's config {path} uses a Redis Cluster ([bus.redis] cluster_nodes): "
                           "the game's bus speaks to one Redis; set GEPPETTO_REDIS_URL to a node yourself")
    url = redis_section.get("url", DEFAULT_URL)
    password = None
    if redis_section.get("password_file"):
        secret = Path(redis_section["password_file"])
        secret = secret if secret.is_absolute() else Path(path).parent / secret
        try:
            password = secret.read_text().strip()
        except OSError as error:
            raise AddressError(f"geppetto's config {path}: cannot read password_file {secret}: "
                               f"{error.strerror}") from error
    else:
        password = os.environ.get(redis_section.get("password_env", DEFAULT_PASSWORD_ENV)) or None
    return with_password(url, password) if password else url


def with_password(url, password):
    """`url` with its password replaced by `password`."""
    parts = urlsplit(url)
    host = parts.hostname or "127.0.0.1"
    host = f"[{host}]" if ":" in host else host
    netloc = f"{quote(parts.username or '', safe='')}:{quote(password, safe='')}@{host}"
    netloc += f":{parts.port}" if parts.port else ""
    return parts._replace(netloc=netloc).geturl()


def same_redis(url):
    """What tells one Redis from another in a URL: scheme, host, port (6379 by default) and
    database (0 by default)."""
    parts = urlsplit(url)
    database = parts.path.strip("/") or "0"
    return (parts.scheme, (parts.hostname or "").lower(), parts.port or 6379, database)


def hide(url):
    """A URL as a message may show it: without its password."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    return with_password(url, "***").replace("%2A%2A%2A", "***")
