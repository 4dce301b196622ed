"""A throw-away single-node Slurm cluster for tests (docs/sweeps.md, "Testing against Slurm").

    with SlurmCluster() as c:          # raises CannotStart (skip) when not root or Slurm is missing
        subprocess.run(["sbatch", ...], env=c.env)

Everything lives in one temporary directory: munged with its own key, socket, pid, seed and log
files; slurmctld -D and slurmd -D with a minimal slurm.conf (proctrack/linuxproc, task/none, one
node with this machine's CPUs and memory, free ports, own spool/state/log directories). No systemd,
no /etc files. Clients reach it through env (SLURM_CONF). stop() cancels the cluster's jobs and
ends every process it started, by PID: the daemons, then any process (slurmstepd, job tasks) whose
environment names this cluster's slurm.conf. Should this process be killed before stop() runs
(a CTest timeout sends SIGKILL), the daemons die with it (PR_SET_PDEATHSIG) and a reaper process,
started in its own session, does the rest of stop(): it ends the processes that name the cluster's
slurm.conf and removes the directory.
"""
import ctypes
import os
import sys
import shutil
import signal
import socket
import subprocess
import tempfile
import time

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "scontrol", "sinfo")


class CannotStart(Exception):
    """Slurm cannot run here (not root, or its binaries are missing): the test is skipped."""


def _find(name):
    return shutil.which(name) or next((p for p in (f"/usr/sbin/{name}", f"/usr/bin/{name}") if os.access(p, os.X_OK)),
                                      None)


def _die_with_parent():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


# The reaper: waits for its parent (the test) to go, then kills, by PID, every process whose
# environment names the cluster's slurm.conf, and removes the cluster's directory.
REAPER = r"""
import os, shutil, signal, sys, time
parent, needle, top = int(sys.argv[1]), ("SLURM_CONF=" + sys.argv[2]).encode(), sys.argv[3]
while True:
    try:
        os.kill(parent, 0)
    except ProcessLookupError:
        break
    time.sleep(0.5)
for _ in range(3):
    for e in os.listdir("/proc"):
        if e.isdigit() and int(e) != os.getpid():
            try:
                with open(f"/proc/{e}/environ", "rb") as f:
                    if needle in f.read().split(b"\0"):
                        os.kill(int(e), signal.SIGKILL)
            except OSError:
                pass
    time.sleep(0.5)
shutil.rmtree(top, ignore_errors=True)
"""


def _mem_mb():
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    return 1024


class SlurmCluster:
    def __init__(self, cpus=None, log=print):
        self.cpus = cpus or os.cpu_count() or 1
        self.log = log
        self.procs = []  # (name, Popen) in start order
        self.reaper = None
        self.dir = None
        self.env = None

    # -- start -------------------------------------------------------------------------------
    def __enter__(self):
        if os.geteuid() != 0:
            raise CannotStart("not root: slurmd and munged need root to start")
        missing = [n for n in DAEMONS + CLIENTS + ("munge",) if not _find(n)]
        if missing:
            raise CannotStart(f"Slurm is not installed ({', '.join(missing)} missing): "
                              "apt-get install slurm-wlm munge (tools/setup.sh)")
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.stop()
        return False

    def _spawn(self, name, args):
        logf = open(os.path.join(self.dir, "log", f"{name}.stdout"), "w")
        p = subprocess.Popen(args, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                             env=self.env, preexec_fn=_die_with_parent)
        logf.close()
        self.procs.append((name, p))
        return p

    def _wait(self, what, check, timeout=60):
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for name, p in self.procs:
                if p.poll() is not None:
                    raise RuntimeError(f"{name} exited with {p.returncode} while waiting for {what}\n{self.logs()}")
            if check():
                return
            time.sleep(0.2)
        raise RuntimeError(f"timed out after {timeout} s waiting for {what}\n{self.logs()}")

    def _start(self):
        d = self.dir = tempfile.mkdtemp(prefix="ahbm-slurm-")  # 0700: munged checks its directories
        for sub in ("munge", "log", "state", "spool", "run"):
            os.makedirs(os.path.join(d, sub), mode=0o700)
        conf = os.path.join(d, "slurm.conf")
        self.env = dict(os.environ, SLURM_CONF=conf)
        self.env.pop("SLURM_JOB_ID", None)
        self.reaper = subprocess.Popen([sys.executable, "-c", REAPER, str(os.getpid()), conf, d],
                                       start_new_session=True, stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        key = os.path.join(d, "munge", "munge.key")
        with open(os.open(key, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400), "wb") as f:
            f.write(os.urandom(1024))
        self.munge_socket = os.path.join(d, "munge", "munge.socket")
        self._spawn("munged", [_find("munged"), "--foreground", "--force", "--key-file", key,
                               "--socket", self.munge_socket, "--pid-file", os.path.join(d, "munge", "munged.pid"),
                               "--seed-file", os.path.join(d, "munge", "munged.seed"),
                               "--log-file", os.path.join(d, "log", "munged.log")])
        self._wait("munged's socket", lambda: subprocess.run(
            f"{_find('munge')} -n -S {self.munge_socket} | {_find('unmunge')} -S {self.munge_socket}",
            shell=True, capture_output=True).returncode == 0)

        ctld_port, node_port = _free_ports(2)
        self.node = "ahbmnode"
        with open(conf, "w") as f:
            f.write(f"""# single-node test cluster (testbench/e2e/slurm_cluster.py)
ClusterName=ahbmtest
SlurmctldHost=localhost
SlurmUser=root
SlurmdUser=root
SlurmctldPort={ctld_port}
SlurmdPort={node_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={self.munge_socket}
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
SlurmctldPidFile={d}/run/slurmctld.pid
SlurmdPidFile={d}/run/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
ReturnToService=2
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=2
MinJobAge=60
NodeName={self.node} NodeHostname=localhost NodeAddr=127.0.0.1 CPUs={self.cpus} RealMemory={_mem_mb()} State=UNKNOWN
PartitionName=test Nodes={self.node} Default=YES MaxTime=INFINITE State=UP
""")
        self._spawn("slurmctld", [_find("slurmctld"), "-D", "-c", "-i", "-f", conf])
        self._wait("slurmctld", lambda: self.run(["scontrol", "ping"]).stdout.find("is UP") >= 0)
        self._spawn("slurmd", [_find("slurmd"), "-D", "-N", self.node, "-f", conf])
        self._wait("the node to be idle", lambda: self.run(["sinfo", "-h", "-n", self.node, "-o", "%T"])
                   .stdout.strip().rstrip("*") in ("idle", "mixed", "allocated"))
        self.log(f"slurm: single-node cluster up in {d} (ports {ctld_port}/{node_port}, {self.cpus} CPUs)")

    # -- use ---------------------------------------------------------------------------------
    def run(self, args, **kw):
        return subprocess.run(args, capture_output=True, text=True, env=self.env, timeout=60, **kw)

    def logs(self):
        out = []
        for name in ("munged.log", "slurmctld.log", "slurmd.log", "munged.stdout", "slurmctld.stdout",
                     "slurmd.stdout"):
            path = os.path.join(self.dir or "", "log", name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    tail = f.read().splitlines()[-15:]
                out.append(f"--- {path} (last lines)\n" + "\n".join(tail))
        return "\n".join(out)

    # -- stop --------------------------------------------------------------------------------
    def _our_pids(self):
        """Processes whose environment names this cluster's slurm.conf (slurmstepd, job tasks)."""
        if not self.env:
            return []
        needle = f"SLURM_CONF={self.env['SLURM_CONF']}".encode()
        pids = []
        for entry in os.listdir("/proc"):
            if entry.isdigit() and int(entry) != os.getpid():
                try:
                    with open(f"/proc/{entry}/environ", "rb") as f:
                        if needle in f.read().split(b"\0"):
                            pids.append(int(entry))
                except OSError:
                    pass
        return pids

    def stop(self):
        if any(p.poll() is None for name, p in self.procs if name == "slurmctld"):
            try:
                self.run(["scancel", "--full", "-u", "root"])
            except Exception:
                pass
        for name, p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for pid in self._our_pids():  # orphaned job steps: by PID, only ours
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.procs = []
        if self.reaper is not None and self.reaper.poll() is None:
            self.reaper.kill()
            self.reaper.wait()
        if self.dir and not os.environ.get("AHBM_KEEP_SLURM_DIR"):
            shutil.rmtree(self.dir, ignore_errors=True)
