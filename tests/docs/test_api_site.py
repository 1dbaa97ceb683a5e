"""The API reference site (bash scripts/docs.sh): generated pages current, rendered in headless Chromium, searchable.

The browser tests build a small site in tmp with the project's mkdocs.yml — the home page, the reference's index
and the ``toolkit.export`` page — which takes ~15 s; the whole site (``mkdocs build --strict``, ~25 s of CPU,
~70 s on a loaded 2-core machine) is built by ``test_whole_site_builds_strict`` in every run of the test command,
so CI builds it with warnings as errors.
"""

from __future__ import annotations

import http.server
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from tests._headless_chromium import chromium_command, run_chromium

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))
import generate_api_pages  # noqa: E402  (scripts/ is not a package)


def _mkdocs_build(config: Path, site: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1",
               PYTHONPATH=os.pathsep.join([str(ROOT / "scripts"), str(ROOT), os.environ.get("PYTHONPATH", "")]))
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
                           "--site-dir", str(site)], capture_output=True, text=True, timeout=600, env=env)


def test_every_public_module_has_a_page_listing_its_names():
    pages = generate_api_pages.expected_pages()
    for module in ("toolkit", "toolkit.numpy", "toolkit.lax", "toolkit.export", "toolkit.shard", "toolkit.passes",
                   "toolkit.random", "toolkit.nn", "toolkit.tree", "toolkit.scipy", "toolkit.lab"):
        assert f"{module}.md" in pages, module
        assert f"::: {module}\n" in pages[f"{module}.md"]
    export_page = pages["toolkit.export.md"]
    assert "        - Exported\n" in export_page and "        - deserialize\n" in export_page
    assert "        - jit\n" in pages["toolkit.md"] and "        - sum\n" in pages["toolkit.numpy.md"]
    assert "::: toolkit.lab.measurement\n" in pages["toolkit.lab.md"]  # a package documented by its submodules


def test_names_a_submodule_shadows_get_their_own_directive():
    """toolkit.shard_map is a function, but toolkit/shard_map.py makes the source say module: documented where
    defined. toolkit.ad.vjp likewise (toolkit/ad/vjp.py); toolkit/__init__ imports vjp from toolkit.ad.api."""
    assert generate_api_pages.shadowed_by_submodule("toolkit", "shard_map")
    assert generate_api_pages.shadowed_by_submodule("toolkit.ad", "vjp")
    assert not generate_api_pages.shadowed_by_submodule("toolkit", "vjp")
    assert not generate_api_pages.shadowed_by_submodule("toolkit", "jit")
    page = generate_api_pages.expected_pages()["toolkit.md"]
    assert "::: toolkit.shard_map.shard_map\n" in page and "        - shard_map\n" not in page
    assert "        - jit\n" in page and "        - vjp\n" in page


def test_public_names_leave_out_other_libraries_objects():
    import toolkit.shard

    names = generate_api_pages.public_names(toolkit.shard)
    assert "NamedSharding" in names and "HloSharding" not in names  # jaxlib's class, re-exported


def test_every_page_is_in_the_site_nav():
    """Every guide in docs/ and every generated API page is reachable from the site's navigation (mkdocs.yml)."""
    nav = (ROOT / "mkdocs.yml").read_text().split("\nnav:", 1)[1]
    for name in generate_api_pages.expected_pages():
        assert f"api/{name}" in nav, name
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert f" {page.name}" in nav, f"docs/{page.name} is not in mkdocs.yml's nav: add it under Guides"


@pytest.fixture(scope="module")
def small_site(tmp_path_factory) -> Path:
    """The home page, the reference's index and toolkit.export's page, built with the project's mkdocs.yml."""
    pytest.importorskip("mkdocs")
    pytest.importorskip("mkdocstrings_handlers.python")
    root = tmp_path_factory.mktemp("site_src")
    (root / "docs" / "api").mkdir(parents=True)
    shutil.copy(ROOT / "docs" / "index.md", root / "docs" / "index.md")
    pages = generate_api_pages.expected_pages()
    for name in ("index.md", "toolkit.export.md"):
        (root / "docs" / "api" / name).write_text(pages[name])
    config = (ROOT / "mkdocs.yml").read_text()
    config = re.sub(r"\nnav:.*", "\n", config, flags=re.S)  # the nav names every page; this site has three
    config = config.replace("paths: [.]", f"paths: [{json.dumps(str(ROOT))}]")
    (root / "mkdocs.yml").write_text(config)
    site = root / "site"
    done = _mkdocs_build(root / "mkdocs.yml", site)
    assert done.returncode == 0, done.stderr[-3000:]
    return site


class _Server:
    """Serves ``site`` on loopback; the search page POSTs its results to /report."""

    def __init__(self, site: Path) -> None:
        reports: list[str] = []
        self.reports = reports

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(site), **kwargs)

            def do_POST(self):  # noqa: N802 - http.server's name
                reports.append(self.rfile.read(int(self.headers["Content-Length"])).decode())
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _dump_dom(tmp_path: Path, url: str) -> str:
    done = run_chromium(tmp_path, "--dump-dom", url=url)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_index_and_exported_page_render_in_chromium(small_site, tmp_path):
    server = _Server(small_site)
    try:
        index = _dump_dom(tmp_path, server.url + "/")
        assert "<title>toolkit</title>" in index
        assert 'href="api/toolkit.export/#toolkit.export.Exported"' in index  # the guide's cross-link
        page = _dump_dom(tmp_path, server.url + "/api/toolkit.export/")
    finally:
        server.close()
    # mkdocstrings rendered the class, its signature and its methods, each with its anchor.
    assert 'id="toolkit.export.Exported"' in page
    for method in ("call", "serialize", "vjp"):
        assert f'id="toolkit.export.Exported.{method}"' in page, method
    assert 'id="toolkit.export.deserialize"' in page
    assert "Could not" not in page


def test_search_finds_the_exported_page(small_site, tmp_path):
    """The site's own search worker (Material's lunr index), loaded in Chromium, answers a query."""
    worker = next((small_site / "assets" / "javascripts" / "workers").glob("search.*.min.js")).name
    (small_site / "search-check.html").write_text(f"""<!doctype html><html><body><script>
const report = (text) => fetch("/report", {{method: "POST", body: text}});
const worker = new Worker("assets/javascripts/workers/{worker}");
worker.onerror = (e) => report("worker error: " + e.message);
worker.onmessage = (event) => {{
  if (event.data.type === 1) worker.postMessage({{type: 2, data: "deserialize"}});   // READY: ask
  else if (event.data.type === 3) report(JSON.stringify(event.data.data));        // RESULT
}};
fetch("search/search_index.json").then((r) => r.json())
  .then((index) => worker.postMessage({{type: 0, data: {{...index, options: {{suggest: false}}}}}}));
</script></body></html>""")
    server = _Server(small_site)
    browser = subprocess.Popen([*chromium_command(tmp_path), "--remote-debugging-port=0", server.url + "/search-check.html"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 90
        while not server.reports and time.monotonic() < deadline and browser.poll() is None:
            time.sleep(0.2)
    finally:
        browser.kill()
        browser.wait(timeout=30)
        server.close()
    assert server.reports, "the search page reported nothing in 90 s"
    result = server.reports[0]
    assert not result.startswith("worker error"), result
    assert "api/toolkit.export/#toolkit.export.deserialize" in result, result[:2000]


@pytest.mark.slow  # ~45 s: the whole site, strict, as `bash scripts/docs.sh` builds it (issue 27: built in CI)
def test_whole_site_builds_strict(tmp_path):
    pytest.importorskip("mkdocs")
    done = subprocess.run(["bash", str(ROOT / "scripts" / "docs.sh"), str(tmp_path / "site")], capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "site" / "api" / "toolkit.numpy" / "index.html").exists()
