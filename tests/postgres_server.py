"""A throwaway PostgreSQL cluster for tests and perf scripts: `initdb` into a temporary folder, `pg_ctl` starting it on
a Unix socket in that folder (`listen_addresses = ''`: no TCP at all), stopped by its postmaster's PID.

The server binaries come from PATH or Debian's `/usr/lib/postgresql/<version>/bin` (`.ci/run` installs the
`postgresql` package where they are missing). `initdb` refuses to run as root, so as root (CI) the cluster belongs
to `nobody` and its programs run through `runuser`; the folder is made traversable for that user.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

SOCKET_WAIT_S = 30.0
"""How long the server may take to accept connections (about 2.5 s on an idle 2-core machine)."""
RUN_AS = "nobody"
"""The user the cluster belongs to when the tests run as root."""


def server_binaries() -> Path | None:
    """The folder holding `initdb` and `pg_ctl`, None when PostgreSQL's server is not installed."""
    found = shutil.which("initdb")
    if found is not None and shutil.which("pg_ctl") is not None:
        return Path(found).parent
    versions = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"),
                      key=lambda path: int(path.parent.parent.name) if path.parent.parent.name.isdigit() else 0)
    return versions[-1].parent if versions else None


class PostgresServer:
    """A running throwaway cluster; `url` connects to its `tripbench` database over the socket.

    Args:
        binaries: The folder of `initdb` and `pg_ctl` (`server_binaries()`).
        max_connections: The server's connection limit (perf scripts with many workers raise it).
    """

    def __init__(self, binaries: Path, *, max_connections: int = 100) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="tripbench-pg-"))
        self.data = self.folder / "data"
        self._binaries = binaries
        self._as_root = os.geteuid() == 0
        user = RUN_AS if self._as_root else os.environ.get("USER") or "postgres"
        if self._as_root:
            self.folder.chmod(0o755)  # the server (nobody) makes its data folder and socket here
            shutil.chown(self.folder, user=RUN_AS)
        try:
            self._run("initdb", "-D", str(self.data), "-U", user, "--auth=trust", "--no-sync", "-E", "UTF8")
            settings = (f"listen_addresses = ''\nunix_socket_directories = '{self.folder}'\n"
                        f"max_connections = {max_connections}\nfsync = off\n")
            with (self.data / "postgresql.conf").open("a", encoding="utf-8") as conf:
                conf.write(settings)
            self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w",
                      "-t", str(int(SOCKET_WAIT_S)), "start")
            self.pid = int((self.data / "postmaster.pid").read_text().split()[0])
            self._run("createdb", "-h", str(self.folder), "-U", user, "tripbench")
        except BaseException:
            self.stop()
            raise
        self.url = f"postgresql://{user}@/tripbench?host={self.folder}"

    def restart(self, down_s: float = 0.0) -> None:
        """Restarts the server as an upgrade or a failover does: a fast shutdown (every connection ended, open
        transactions rolled back), `down_s` seconds with nothing listening, then a start on the same socket."""
        self.stop_only()
        time.sleep(down_s)
        self.start_again()

    def stop_only(self) -> None:
        """A fast shutdown that keeps the cluster (`start_again` starts it)."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "fast", "-w", "stop")

    def start_again(self) -> None:
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.folder / "server.log"), "-w",
                  "-t", str(int(SOCKET_WAIT_S)), "start")
        self.pid = int((self.data / "postmaster.pid").read_text().split()[0])

    def _run(self, program: str, *args: str) -> None:
        command = [str(self._binaries / program), *args]
        if program == "createdb" and not (self._binaries / program).exists():
            command[0] = shutil.which("createdb") or "createdb"  # Debian keeps client programs in /usr/bin too
        if self._as_root:
            command = ["runuser", "-u", RUN_AS, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, check=False, timeout=120, cwd=self.folder)
        if done.returncode != 0:
            raise RuntimeError(f"{' '.join(command)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")

    def stop(self) -> None:
        """Stops the server by its PID and removes the folder."""
        pid = getattr(self, "pid", None)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGQUIT)  # "immediate" shutdown: no checkpoint, the cluster is thrown away
                deadline = time.monotonic() + SOCKET_WAIT_S
                while time.monotonic() < deadline:
                    os.kill(pid, 0)
                    time.sleep(0.05)
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        shutil.rmtree(self.folder, ignore_errors=True)
