"""Which tests must share a pytest-xdist worker, and the scheduler that keeps them together (loaded by conftest.py).

``scripts/test.sh`` runs pytest with ``-n <cores> --dist loadgroup``: each test goes to whichever worker is free,
except the tests that share state across tests, which run on one worker, in file order:

* the code blocks of one Markdown page (README.md, docs/*.md): they share a namespace and run in order;
* every test of a module marked ``one_worker`` (``pytestmark = pytest.mark.one_worker``), e.g. a module-scoped
  fixture that computes the results of all the module's selected tests at once;
* tests marked ``xdist_group(name)``: one worker per name (pytest-xdist's own mark);
* the tests marked ``multiprocess`` (tests/distributed): they start several processes each and some time a peer's
  death against heartbeat timeouts, so they run one at a time, as in a single-process run.

Why a scheduler of our own: pytest-xdist 3.8's ``loadgroup`` passes the group from the workers to the scheduler by
rewriting each test's node id (``item._nodeid``), which pytest 9.2 no longer reads, so the groups are silently
dropped (pytest-dev/pytest-xdist#1386). Here each worker writes its groups to a file named in its ``workerinput``
while collecting, and the controller's scheduler (xdist's ``LoadGroupScheduling``) reads them when it splits the
collection into work units. Order: the largest groups first (xdist's ``--loadscope-reorder``), then the tests marked
``slow``, then the rest in collection order. Without xdist nothing here runs.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

_GROUPS_FILE = "toolkit_xdist_groups"  # the workerinput key naming the file a worker writes its groups to


def group_of(item: pytest.Item) -> str | None:
    """The group ``item`` must run in (tests of one group run on one worker, in collection order), or None."""
    names = sorted({str(mark.args[0] if mark.args else mark.kwargs.get("name", "default"))
                    for mark in item.iter_markers("xdist_group")})
    if names:
        return "_".join(names)
    if item.path.suffix == ".md" or item.get_closest_marker("one_worker") is not None:
        return item.nodeid.split("::", 1)[0]  # the file, relative to the rootdir
    if item.get_closest_marker("multiprocess") is not None:
        # Several processes each, some timing a peer's death against heartbeats: one such test at a time, as before.
        return "multiprocess"
    return None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "one_worker: under pytest-xdist, every test of this module runs on one worker, in file order "
        "(for tests that share state across tests; tests/xdist_groups.py)")
    if config.pluginmanager.hasplugin("xdist"):  # xdist's hooks are only known when xdist is installed
        config.pluginmanager.register(_XdistGroups(config), "toolkit-xdist-groups")


class _XdistGroups:
    """The hooks on both sides: the controller names a file per worker and schedules; each worker writes its file."""

    def __init__(self, config: pytest.Config) -> None:
        self._config = config
        self._directory: str | None = None

    def _worker_directory(self) -> str:
        if self._directory is None:
            self._directory = tempfile.mkdtemp(prefix="toolkit-xdist-groups-")
        return self._directory

    @pytest.hookimpl
    def pytest_configure_node(self, node) -> None:  # controller, per worker, before it starts
        node.workerinput[_GROUPS_FILE] = os.path.join(self._worker_directory(), f"{node.gateway.id}.json")

    @pytest.hookimpl
    def pytest_xdist_make_scheduler(self, config: pytest.Config, log):  # controller
        if config.getvalue("dist") != "loadgroup":
            return None
        from xdist.scheduler import LoadGroupScheduling  # xdist is installed: this plugin is registered only then

        directory = self._worker_directory()

        class FileGroupScheduling(LoadGroupScheduling):
            """xdist's LoadGroupScheduling, the groups read from the workers' files instead of from node ids."""

            _groups: dict[str, str] | None = None

            def _split_scope(self, nodeid: str) -> str:
                if self._groups is None:
                    if not self.collection_is_completed:  # the workers' files are complete once they collected
                        return super()._split_scope(nodeid)
                    self._groups = {}
                    for path in sorted(Path(directory).glob("*.json")):
                        self._groups.update(json.loads(path.read_text()))
                group = self._groups.get(nodeid)
                return f"@{group}" if group is not None else super()._split_scope(nodeid)

        return FileGroupScheduling(config, log)

    @pytest.hookimpl(trylast=True)  # after -k/-m deselection: the groups of the tests that run
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list[pytest.Item]) -> None:  # worker
        workerinput = getattr(config, "workerinput", None)
        if workerinput is None or _GROUPS_FILE not in workerinput:
            return
        groups = {item.nodeid: group for item in items if (group := group_of(item)) is not None}
        # Tests marked slow (minutes of CPU: the corpus runs) go first, so that none of them starts last while the
        # other workers have nothing left to do. Every worker sorts alike; a group keeps its own order.
        items.sort(key=lambda item: 0 if item.nodeid not in groups and item.get_closest_marker("slow") else 1)
        target = Path(workerinput[_GROUPS_FILE])
        partial = target.with_suffix(".partial")
        partial.write_text(json.dumps(groups))
        partial.replace(target)  # the controller never reads half a file

    @pytest.hookimpl
    def pytest_unconfigure(self, config: pytest.Config) -> None:
        if self._directory is not None:
            shutil.rmtree(self._directory, ignore_errors=True)
