"""Where a process learns its place in a multi-process run: the variables its launcher set.

``toolkit.distributed.initialize()`` with arguments left out fills them from
here, as ``jax.distributed.initialize()`` does with JAX's ``ClusterEnv``
subclasses. Each launcher has one small detector class, registered by
subclassing :class:`ClusterEnv`:

================  =====================================================================
detector          variables (as the launcher sets them in every process)
================  =====================================================================
``generic``       ``TOOLKIT_COORDINATOR_ADDRESS``, ``TOOLKIT_NUM_PROCESSES``,
                  ``TOOLKIT_PROCESS_ID``, ``TOOLKIT_LOCAL_DEVICE_IDS`` (set by hand or
                  by any launcher script)
``ompi``          Open MPI's ``mpirun``: ``OMPI_COMM_WORLD_SIZE``/``_RANK``/``_LOCAL_RANK``;
                  coordinator host from ``OMPI_MCA_orte_hnp_uri`` (Open MPI 4, the host
                  ``mpirun`` runs on) or ``PMIX_SERVER_URI*`` (Open MPI 5, single host only)
``mpich``         MPICH's Hydra ``mpiexec``: ``PMI_RANK``, ``PMI_SIZE``, ``MPI_LOCALRANKID``;
                  one host only (``MPI_LOCALNRANKS == PMI_SIZE``: Hydra names no host),
                  port from the ``hydra_pmi_proxy`` parent's pid
``slurm``         ``srun``: ``SLURM_JOB_ID``, ``SLURM_NTASKS``, ``SLURM_PROCID``,
                  ``SLURM_LOCALID``, ``SLURM_STEP_NODELIST`` (first host of the step)
================  =====================================================================

Precedence (:func:`resolve`): an explicit argument wins; then each
``TOOLKIT_*`` variable that is set (like JAX's ``JAX_COORDINATOR_ADDRESS`` and
``JAX_LOCAL_DEVICE_IDS``); then the first present launcher in the order above —
MPI launchers before SLURM because ``mpirun``/``mpiexec`` run inside a SLURM
allocation whose batch step also sets ``SLURM_*`` (JAX checks Open MPI before
SLURM for the same reason). A launcher that knows each process's rank on its
host gives ``local_device_ids = [local rank]`` (one accelerator per process, as
JAX does; the CPU client ignores it).

The coordinator's port, when the launcher does not give one, is derived from
the job's id so that every process computes the same port and two jobs on one
host rarely collide: ``61440 + job_id % 4096`` (JAX's rule: the top 4096 ports;
Open MPI 4's job ids are multiples of 4096, so theirs is divided by 4096
first). ``TOOLKIT_COORDINATOR_PORT`` overrides it (JAX:
``JAX_COORDINATOR_PORT``).

This module imports nothing of toolkit: it only reads ``os.environ``.
"""

from __future__ import annotations

import os
import re
import zlib
from typing import ClassVar, Sequence

__all__ = ["ClusterEnv", "GenericEnvironment", "OpenMPIEnvironment", "MPICHEnvironment", "SlurmEnvironment",
           "registered", "detect", "resolve", "expand_nodelist", "Resolved"]

#: Overrides the port a launcher detector derives from its job id.
PORT_VARIABLE = "TOOLKIT_COORDINATOR_PORT"
_PORT_BASE = 65536 - 4096


def _text(name: str) -> str | None:
    value = os.environ.get(name)
    return value if value else None


def _int(name: str) -> int:
    text = os.environ.get(name)
    if text is None or text == "":
        raise ValueError(f"environment variable {name} is not set (the launcher sets it in every process)")
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"environment variable {name} must be an integer, got {text!r}") from None


def _port(job_key: int) -> str:
    override = _text(PORT_VARIABLE)
    if override is not None:
        if not override.isdigit() or not 0 < int(override) < 65536:
            raise ValueError(f"environment variable {PORT_VARIABLE} must be a port number 1..65535, "
                             f"got {override!r}")
        return override
    return str(_PORT_BASE + job_key % 4096)


def _host_port(host: str, port: str) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


class ClusterEnv:
    """One launcher's variables; subclassing registers a detector (JAX's ``ClusterEnv``).

    A subclass sets ``name`` and ``variables`` (what :meth:`is_env_present`
    looks for, named in the error when nothing matches) and implements the
    class methods below; each getter reads only ``os.environ`` and raises
    ``ValueError`` naming the variable that is missing or malformed.
    """

    name: ClassVar[str] = ""
    variables: ClassVar[tuple[str, ...]] = ()
    _registry: ClassVar[list[type[ClusterEnv]]] = []

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)  # type: ignore[call-arg]
        ClusterEnv._registry.append(cls)

    @classmethod
    def is_env_present(cls) -> bool:
        """Whether this process was started by this launcher (its variables are set)."""
        return all(_text(v) is not None for v in cls.variables)

    @classmethod
    def get_coordinator_address(cls) -> str | None:
        """``host:port`` of process 0, the same in every process; ``None`` when this environment does not say."""
        raise NotImplementedError

    @classmethod
    def get_process_count(cls) -> int | None:
        """How many processes the launcher started (``None`` when this environment does not say)."""
        raise NotImplementedError

    @classmethod
    def get_process_id(cls) -> int | None:
        """This process's index among them, ``0 <= id < count`` (``None`` when this environment does not say)."""
        raise NotImplementedError

    @classmethod
    def get_local_process_id(cls) -> int | None:
        """This process's index among those on its host, or ``None`` when the launcher does not say."""
        return None

    @classmethod
    def get_local_device_ids(cls) -> list[int] | None:
        """The local devices this process should use: ``[local process id]`` when known (JAX's rule), else None."""
        local = cls.get_local_process_id()
        return None if local is None else [local]


class GenericEnvironment(ClusterEnv):
    """``TOOLKIT_*`` variables, each on its own; present when any of the first three is set."""

    name = "generic"
    variables = ("TOOLKIT_COORDINATOR_ADDRESS", "TOOLKIT_NUM_PROCESSES", "TOOLKIT_PROCESS_ID")

    @classmethod
    def is_env_present(cls) -> bool:
        """Whether any of ``TOOLKIT_COORDINATOR_ADDRESS``/``_NUM_PROCESSES``/``_PROCESS_ID`` is set."""
        return any(_text(v) is not None for v in cls.variables)

    @classmethod
    def get_coordinator_address(cls) -> str | None:
        """``TOOLKIT_COORDINATOR_ADDRESS`` (checked by ``initialize``), or None."""
        return _text("TOOLKIT_COORDINATOR_ADDRESS")

    @classmethod
    def get_process_count(cls) -> int | None:
        """``TOOLKIT_NUM_PROCESSES``, or None."""
        return None if _text("TOOLKIT_NUM_PROCESSES") is None else _int("TOOLKIT_NUM_PROCESSES")

    @classmethod
    def get_process_id(cls) -> int | None:
        """``TOOLKIT_PROCESS_ID``, or None."""
        return None if _text("TOOLKIT_PROCESS_ID") is None else _int("TOOLKIT_PROCESS_ID")

    @classmethod
    def get_local_device_ids(cls) -> list[int] | None:
        """``TOOLKIT_LOCAL_DEVICE_IDS``, comma-separated integers (``0,1``), or None."""
        text = _text("TOOLKIT_LOCAL_DEVICE_IDS")
        if text is None:
            return None
        try:
            return [int(part) for part in text.split(",")]
        except ValueError:
            raise ValueError("environment variable TOOLKIT_LOCAL_DEVICE_IDS must be comma-separated integers "
                             f"such as '0,1', got {text!r}") from None


_PMIX_URI = re.compile(r"^PMIX_SERVER_URI\d*$")


def _uri_host(uri: str, variable: str) -> str:
    # tcp://10.96.0.1,10.148.0.1:34911 lists the launcher's addresses: the first is used (as JAX does);
    # tcp6://[fe80::1,2620::2]:43370 the same in IPv6.
    match = re.search(r"tcp4?://(.+?)[,:]|tcp6://\[(.+?)[,\]]", uri)
    if match is None:
        raise ValueError(f"environment variable {variable}={uri!r}: no tcp:// or tcp6:// address of the launcher "
                         "in it")
    return next(group for group in match.groups() if group is not None)


class OpenMPIEnvironment(ClusterEnv):
    """Open MPI's ``mpirun``: ranks from ``OMPI_COMM_WORLD_*``, the launcher's host from its URI variable."""

    name = "ompi"
    variables = ("OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                 "OMPI_MCA_orte_hnp_uri | PMIX_SERVER_URI*")

    @staticmethod
    def _pmix_uri() -> tuple[str, str] | None:
        names = sorted((n for n in os.environ if _PMIX_URI.match(n) and os.environ[n]), reverse=True)
        return (names[0], os.environ[names[0]]) if names else None

    @classmethod
    def is_env_present(cls) -> bool:
        """Whether ``OMPI_COMM_WORLD_SIZE``/``_RANK``/``_LOCAL_RANK`` and a launcher URI variable are set."""
        ranks = all(_text(v) is not None for v in cls.variables[:3])
        return ranks and (_text("OMPI_MCA_orte_hnp_uri") is not None or cls._pmix_uri() is not None)

    @classmethod
    def get_coordinator_address(cls) -> str:
        """``mpirun``'s host (first address in its URI) and a port from the job id."""
        hnp = _text("OMPI_MCA_orte_hnp_uri")
        if hnp is not None:
            # Open MPI 4: "1531576320.0;tcp://10.96.0.1,10.148.0.1:34911" — the job id (a multiple of 4096)
            # before the dot, then mpirun's own addresses: the same text in every process on every host.
            job = hnp.split(".", 1)[0]
            if not job.isdigit():
                raise ValueError(f"environment variable OMPI_MCA_orte_hnp_uri={hnp!r}: expected "
                                 "'<job id>.<vpid>;tcp://<address>:<port>'")
            return _host_port(_uri_host(hnp, "OMPI_MCA_orte_hnp_uri"), _port(int(job) // 4096))
        pmix = cls._pmix_uri()
        assert pmix is not None, "is_env_present() was checked"
        variable, uri = pmix
        # Open MPI 5 (PRRTE): the URI names this host's own daemon, which is mpirun only on mpirun's host.
        if cls.get_process_count() != _int("OMPI_COMM_WORLD_LOCAL_SIZE"):
            raise ValueError(f"Open MPI 5 ({variable}) names each host's own daemon, not mpirun's host, and this "
                             "run spans several hosts: set TOOLKIT_COORDINATOR_ADDRESS to host:port of rank 0's "
                             "host (or pass coordinator_address)")
        namespace = _text("PMIX_NAMESPACE") or uri.split(";", 1)[0]
        return _host_port(_uri_host(uri, variable), _port(zlib.crc32(namespace.encode())))

    @classmethod
    def get_process_count(cls) -> int:
        """``OMPI_COMM_WORLD_SIZE``."""
        return _int("OMPI_COMM_WORLD_SIZE")

    @classmethod
    def get_process_id(cls) -> int:
        """``OMPI_COMM_WORLD_RANK``."""
        return _int("OMPI_COMM_WORLD_RANK")

    @classmethod
    def get_local_process_id(cls) -> int:
        """``OMPI_COMM_WORLD_LOCAL_RANK``."""
        return _int("OMPI_COMM_WORLD_LOCAL_RANK")


class MPICHEnvironment(ClusterEnv):
    """MPICH's Hydra ``mpiexec`` (and other PMI-1 launchers): ``PMI_RANK``, ``PMI_SIZE``, ``MPI_LOCALRANKID``."""

    name = "mpich"
    variables = ("PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID")

    @classmethod
    def get_coordinator_address(cls) -> str:
        """All ranks on one host (``MPI_LOCALNRANKS == PMI_SIZE``): ``127.0.0.1`` and a port from the launcher.

        Hydra's variables name no host (``PMI_FD`` is a pipe to the local
        proxy), so several hosts need ``TOOLKIT_COORDINATOR_ADDRESS`` (the
        error says so). The port: ``TOOLKIT_COORDINATOR_PORT``, else derived
        from the pid of the ``hydra_pmi_proxy`` that started this process —
        the same for every rank on the host, different for each ``mpiexec``.
        """
        if _text("MPI_LOCALNRANKS") is None or _int("MPI_LOCALNRANKS") != cls.get_process_count():
            raise ValueError("MPICH/PMI run across several hosts (MPI_LOCALNRANKS != PMI_SIZE, or "
                             "MPI_LOCALNRANKS unset): the launcher's variables do not name rank 0's host; set "
                             "TOOLKIT_COORDINATOR_ADDRESS to host:port of rank 0's host (or pass "
                             "coordinator_address)")
        if _text(PORT_VARIABLE) is not None:
            return _host_port("127.0.0.1", _port(0))
        proxy = _ancestor_named("hydra_pmi_proxy")
        if proxy is None:
            raise ValueError("MPICH/PMI variables are set but no hydra_pmi_proxy started this process, so no "
                             f"port is known to every rank: set {PORT_VARIABLE} (or TOOLKIT_COORDINATOR_ADDRESS)")
        return _host_port("127.0.0.1", _port(proxy))

    @classmethod
    def get_process_count(cls) -> int:
        """``PMI_SIZE``."""
        return _int("PMI_SIZE")

    @classmethod
    def get_process_id(cls) -> int:
        """``PMI_RANK``."""
        return _int("PMI_RANK")

    @classmethod
    def get_local_process_id(cls) -> int:
        """``MPI_LOCALRANKID``."""
        return _int("MPI_LOCALRANKID")


def _ancestor_named(command: str) -> int | None:
    """The pid of the nearest ancestor process whose command is ``command`` (Linux ``/proc``), or None."""
    pid = os.getppid()
    for _ in range(32):  # a launcher is a few levels up at most; never loop on a broken /proc
        if pid <= 1:
            return None
        try:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read()
        except OSError:
            return None
        name = fields[fields.index("(") + 1:fields.rindex(")")]
        if name == command[:15]:  # the kernel keeps 15 characters of a command's name
            return pid
        pid = int(fields[fields.rindex(")") + 2:].split()[1])
    return None


def expand_nodelist(nodelist: str) -> list[str]:
    """Expand SLURM's compressed host list: ``node[001-003,007],login1`` → node001 node002 node003 node007 login1.

    Ranges keep their zero padding (the width of the lower bound), several
    bracket groups in one name multiply out (``r[1-2]n[1-2]`` → r1n1 r1n2
    r2n1 r2n2). Raises ``ValueError`` naming the list when a bracket is
    unbalanced or a range is not ``low-high`` with ``low <= high``.
    """
    hosts: list[str] = []
    depth, start = 0, 0
    for i, ch in enumerate(nodelist + ","):
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if depth not in (0, 1):
            raise ValueError(f"SLURM node list {nodelist!r}: unbalanced brackets")
        if ch == "," and depth == 0:
            item = nodelist[start:i].strip()
            start = i + 1
            if item:
                hosts.extend(_expand_host(item, nodelist))
    if depth != 0:
        raise ValueError(f"SLURM node list {nodelist!r}: unbalanced brackets")
    return hosts


def _expand_host(item: str, nodelist: str) -> list[str]:
    open_at = item.find("[")
    if open_at < 0:
        if "]" in item:
            raise ValueError(f"SLURM node list {nodelist!r}: unbalanced brackets")
        return [item]
    close_at = item.find("]", open_at)
    if close_at < 0:
        raise ValueError(f"SLURM node list {nodelist!r}: unbalanced brackets")
    prefix, body, rest = item[:open_at], item[open_at + 1:close_at], item[close_at + 1:]
    tails = _expand_host(rest, nodelist) if rest else [""]
    names: list[str] = []
    for part in body.split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()) or (high and int(high) < int(low)):
            raise ValueError(f"SLURM node list {nodelist!r}: {part!r} is not a number or a range low-high")
        for n in range(int(low), int(high or low) + 1):
            names.extend(f"{prefix}{n:0{len(low)}d}{tail}" for tail in tails)
    return names


class SlurmEnvironment(ClusterEnv):
    """SLURM's ``srun``: one task per process; the coordinator is the step's first host."""

    name = "slurm"
    variables = ("SLURM_JOB_ID", "SLURM_NTASKS", "SLURM_PROCID", "SLURM_LOCALID", "SLURM_STEP_NODELIST")

    @classmethod
    def get_coordinator_address(cls) -> str:
        """The first host of ``SLURM_STEP_NODELIST`` and port ``61440 + SLURM_JOB_ID % 4096``."""
        hosts = expand_nodelist(os.environ.get("SLURM_STEP_NODELIST", ""))
        if not hosts:
            raise ValueError("environment variable SLURM_STEP_NODELIST names no host")
        return _host_port(hosts[0], _port(_int("SLURM_JOB_ID")))

    @classmethod
    def get_process_count(cls) -> int:
        """``SLURM_NTASKS``."""
        return _int("SLURM_NTASKS")

    @classmethod
    def get_process_id(cls) -> int:
        """``SLURM_PROCID``."""
        return _int("SLURM_PROCID")

    @classmethod
    def get_local_process_id(cls) -> int:
        """``SLURM_LOCALID``."""
        return _int("SLURM_LOCALID")


def registered() -> list[type[ClusterEnv]]:
    """Every detector, in the order :func:`resolve` tries them (generic first, then MPI launchers, then SLURM)."""
    return list(ClusterEnv._registry)


def detect() -> type[ClusterEnv] | None:
    """The first launcher detector (not the generic one) whose variables are present, or None."""
    return next((env for env in registered() if env is not GenericEnvironment and env.is_env_present()), None)


class Resolved:
    """What :func:`resolve` found: the four values (None where nothing said) and where each came from."""

    def __init__(self, coordinator_address: str | None, num_processes: int | None, process_id: int | None,
                 local_device_ids: list[int] | None, sources: dict[str, str]) -> None:
        self.coordinator_address = coordinator_address
        self.num_processes = num_processes
        self.process_id = process_id
        self.local_device_ids = local_device_ids
        #: argument name -> "argument", "generic" or a launcher's ``name``
        self.sources = sources

    def __repr__(self) -> str:
        return (f"Resolved(coordinator_address={self.coordinator_address!r}, num_processes={self.num_processes}, "
                f"process_id={self.process_id}, local_device_ids={self.local_device_ids}, sources={self.sources})")


def looked_for() -> str:
    """The variables every detector looks for, for error messages."""
    return "; ".join(f"{env.name}: {', '.join(env.variables)}" for env in registered())


def launcher_named(method: str) -> type[ClusterEnv] | None:
    """The launcher ``cluster_detection_method`` names (``"deactivate"``: none); ``ValueError`` for another name."""
    if method == "deactivate":
        return None
    launchers = {env.name: env for env in registered() if env is not GenericEnvironment}
    if method in launchers:
        return launchers[method]
    raise ValueError(f"toolkit.distributed.initialize: unknown cluster_detection_method {method!r}; expected None "
                     f"(detect the launcher), 'deactivate' (no launcher) or one of {list(launchers)}"
                     + (" (toolkit reads mpirun's and mpiexec's variables instead of asking mpi4py)"
                        if method == "mpi4py" else ""))


def resolve(coordinator_address: str | None = None, num_processes: int | None = None,
            process_id: int | None = None, local_device_ids: Sequence[int] | None = None,
            cluster_detection_method: str | None = None) -> Resolved:
    """Fill the arguments left ``None`` from the environment: ``TOOLKIT_*`` variables, then one launcher.

    Explicit arguments are never replaced. A launcher is consulted only when
    one of the first three is still unset, and only the first present one
    (:func:`detect`); it also gives ``local_device_ids`` when it knows the
    local rank. Values may stay None (``initialize`` reports that, naming
    :func:`looked_for`). Raises ``ValueError`` naming the variable when a
    present variable is malformed. ``cluster_detection_method`` (JAX's argument): ``None`` detects the
    launcher, ``"deactivate"`` consults none (the ``TOOLKIT_*`` variables still count), a launcher's ``name``
    consults that one only.
    """
    values: dict[str, object] = {"coordinator_address": coordinator_address, "num_processes": num_processes,
                                 "process_id": process_id,
                                 "local_device_ids": None if local_device_ids is None else list(local_device_ids)}
    sources = {key: "argument" for key, value in values.items() if value is not None}

    def fill(env: type[ClusterEnv]) -> None:
        getters = {"coordinator_address": env.get_coordinator_address, "num_processes": env.get_process_count,
                   "process_id": env.get_process_id, "local_device_ids": env.get_local_device_ids}
        for key, getter in getters.items():
            if values[key] is None:
                value = getter()
                if value is not None:
                    values[key] = value
                    sources[key] = env.name

    fill(GenericEnvironment)
    if any(values[key] is None for key in ("coordinator_address", "num_processes", "process_id")):
        if cluster_detection_method is None:
            env = detect()
        else:
            env = launcher_named(cluster_detection_method)
            env = env if env is not None and env.is_env_present() else None
        if env is not None:
            fill(env)
    ids = values["local_device_ids"]
    return Resolved(values["coordinator_address"], values["num_processes"],  # type: ignore[arg-type]
                    values["process_id"], None if ids is None else list(ids), sources)  # type: ignore[arg-type,call-overload]
