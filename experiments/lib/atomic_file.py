"""Writing a file so that it is whole or absent: the content goes to a new temporary file beside the target (a
fresh name from mkstemp, never one a user's file may have, such as PATH.tmp) and is renamed into place, so an
interrupted write leaves the earlier file as it was and nothing that looks complete."""
import os
import tempfile


def write_with(path, write, binary=False):
    """Replaces `path` whole with what write(file) writes, with the mode a plain open() would give."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.fchmod(fd, 0o666 & ~umask)  # mkstemp's files are 0600
        with os.fdopen(fd, "wb" if binary else "w") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        if os.path.lexists(tmp):
            os.remove(tmp)
        raise


def write_text(path, text):
    write_with(path, lambda f: f.write(text))
