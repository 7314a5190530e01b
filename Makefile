# eegbench: `make eval` sets everything up and runs the benchmark; `make test` runs the tests
# (lint, unit and integration tiers, Docker included); `make test-fast` the unit tier alone.
PYTHON ?= python3
VENV   ?= .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
RAY_STAMP := $(VENV)/.ray-installed

MODEL    ?=
PARADIGM ?= codeact
SET      ?=
JOBS     ?= 2
EPOCHS   ?= 1
RUN      ?=
PARSER   ?=
JUDGE    ?=
CASES    ?=
DATA_ROOT ?=
SANDBOX  ?= auto
WARM_POOL ?=
EXECUTOR ?=
EVAL_ARGS ?=
RUNS     ?=
REPORT_ARGS ?=

.PHONY: setup ray data truth truth-check sensitivity plans eval report test test-fast lint docs bench clean docker image browser uml root chaos

setup: $(STAMP)

# bubblewrap is installed when root runs this; anyone else is told to ask for it. `eegbench
# doctor` then checks the sandbox can start here (user namespaces, limits) and says what to enable;
# `eegbench jit-cache` compiles the kernels' numba code once for this CPU (read-only in sandboxes).
$(STAMP): pyproject.toml kernel_image/requirements.txt
	@command -v bwrap >/dev/null 2>&1 || { [ "$$(id -u)" = 0 ] && apt-get update -qq && apt-get install -y -qq bubblewrap; } \
		|| { echo "make setup: bubblewrap is missing; ask an administrator to install it (apt-get install bubblewrap), then rerun" >&2; exit 2; }
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -r kernel_image/requirements.txt -e '.[test,local-llm]'
	$(PY) -m runner.cli doctor
	$(PY) -m runner.cli jit-cache --sandbox local
	touch $(STAMP)

# Ray, for EXECUTOR=ray and the tests (not needed by a thread-pool run).
ray: $(RAY_STAMP)

$(RAY_STAMP): $(STAMP)
	$(PY) -m pip install -q -e '.[ray]'
	touch $(RAY_STAMP)

data: setup
	$(PY) -m runner.cli data

truth: data
	$(PY) -m runner.cli truth

truth-check: data
	$(PY) -m runner.cli truth --check

# Every task's mutants (plausible wrong analyses) through the scorer; TASK=id for one task.
sensitivity: data
	$(PY) -m runner.cli instances --sensitivity $(if $(TASK),--task $(TASK),)

# BrainAgent tool plans, run in-process: each instance's plan must reproduce its ground truth.
plans: data
	$(PY) -m runner.cli plans check

# The compile cache is rebuilt first if it is missing or stale (another CPU, a new image); if it
# cannot be, the run says so and its kernels compile for themselves.
eval: data $(if $(filter ray,$(EXECUTOR)),ray)
	-$(PY) -m runner.cli jit-cache --sandbox $(SANDBOX)
	$(PY) -m runner.cli eval --paradigm $(PARADIGM) --jobs $(JOBS) --epochs $(EPOCHS) --sandbox $(SANDBOX) $(if $(WARM_POOL),--warm-pool) \
		$(if $(EXECUTOR),--executor '$(EXECUTOR)') \
		$(if $(MODEL),--model '$(MODEL)') $(if $(SET),--set '$(SET)') $(if $(RUN),--run '$(RUN)') \
		$(if $(PARSER),--parser '$(PARSER)') $(if $(JUDGE),--judge '$(JUDGE)') \
		$(if $(CASES),--cases '$(CASES)') $(if $(DATA_ROOT),--data-root '$(DATA_ROOT)') $(EVAL_ARGS)

# Tables, statistics and figures of finished runs: make report RUNS="run-a run-b" [REPORT_ARGS="--html r.html"]
report: setup
	@[ -n "$(RUNS)" ] || { echo 'make report: name the runs, e.g. RUNS="run-a run-b"' >&2; exit 2; }
	$(PY) -m runner.cli report $(RUNS) $(REPORT_ARGS)

# Docker is not optional for the tests: the conformance suite runs on both backends, and the
# HTML report is opened in a real browser (Debian's Chromium).
test: root ray lint data image browser uml
	$(PY) -m pytest -q -ra --durations=30 -n 4 --dist loadfile --no-loadscope-reorder

# make test installs Docker, Chromium and user-mode Linux, starts dockerd, loop-mounts and
# creates two users (to run the local backend's suite as an ordinary user): root's work.
root:
	@[ "$$(id -u)" = 0 ] || { echo "make test runs as root (it installs Docker, Chromium and user-mode Linux, starts dockerd and creates two ordinary users to run the local backend's suite as one); as yourself, run make test-fast" >&2; exit 2; }

# The edit loop: unit tests only (no sandbox, no Docker, no root), a test file to each of two
# workers as in make test (1 min 44 s here; 3 min 5 s in one process).
test-fast: data
	$(PY) -m pytest -q -ra -m "not integration and not docker" --durations=5 -n 2 --dist loadfile

# The chaos test at length: 20 SIGKILLs of an oracle run, each resumed, on both backends (CI runs 3).
chaos: data image
	EEGBENCH_CHAOS_CYCLES=20 $(PY) -m pytest -q -ra -s tests/integration/test_eval_survives_chaos.py

# pyflakes, import order, docstrings on the public API; types (strict on runner/ and validation/).
lint: setup
	$(PY) -m ruff check .
	$(PY) -m mypy

# The generated tables of docs/ (toolsets, statuses), rewritten from the code; the unit tier
# fails while one is stale.
docs: setup
	$(PY) -m runner.commands.docs; test $$? -le 1  # 1: a table was rewritten

# A Docker daemon that answers (installs docker.io and starts dockerd as root if needed).
docker:
	sh kernel_image/docker-up.sh

# Debian's headless Chromium for the report's browser tests (installed as root if missing).
browser:
	@command -v chromium >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; }

# Debian's user-mode Linux: the tests boot it to run sandboxes on a real cgroup v2 hierarchy
# (this machine kind's cgroups are v1). Installed as root if missing.
uml:
	@command -v linux.uml >/dev/null 2>&1 || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq user-mode-linux >/dev/null; }

# The kernel image, built offline; a no-op when the tag for Dockerfile + requirements exists.
image: setup docker
	PYTHON=$(PY) sh kernel_image/build.sh
	$(PY) -m runner.cli jit-cache --sandbox docker

bench: data image ray
	$(PY) -m runner.bench

clean:
	rm -rf $(VENV) runs build *.egg-info
