"""benchaudit's hook for Inspect tasks: loads one task (an inspect_evals family or a task in a
researcher's own file) and lets Inspect's own runtime score forged answers, with no model and
no key; with ``run``, plays a real model through the task instead (``audit --model``).

Three commands, one JSON request on stdin and one JSON answer on stdout each (the "answers"
probe family of benchaudit's external-target protocol, docs/targets.md):

* ``describe``: ``{"task": SPEC, "args": {...}, "samples_file": PATH|null}`` → the task (its
  dataset, solver and scorers), the samples (id, input text, targets, choices) and, per audit
  stage, why it cannot be probed (a sandbox, a run-time download).
* ``score``: the same fields plus ``"items": [{"id", "forgery", "output"}]`` → one result per
  item, in order: every scorer's value (``value_to_float`` of Inspect's score), the answer the
  scorer extracted, and what the model was asked (solver calls, grader calls per scorer).
* ``run`` (``audit --model``): the same task fields plus ``"model": {"name", "model",
  "base_url", "api_key_env"}``, ``"samples": [ids]``, ``"seeds": [...]``, ``"max_tokens"`` and
  ``"log_dir"`` → a real model through the task's own solver and scorers, one Inspect eval per
  seed (the seed in the generate config), each eval's log under ``log_dir/seed-S/``; one result
  per sample and seed (``run_model``).

How a forged answer reaches the scorer: ``inspect_ai.eval`` runs the task's own solver chain
with Inspect's ``mockllm/model`` provider, whose output function answers each sample's first
generate call with that item's forged text (as a call of the task's ``submit`` tool when the
solver offers one, as plain content otherwise); the task's own scorers then score the state.
Every generate call is counted per solver and per scorer span of the sample's event log, so a
scorer that asks a model (model-graded) or a solver that asks more than once is reported, and
the audit refuses to read those scores as verdicts.

Offline settings, set before Inspect is imported:
* ``HF_HUB_OFFLINE=1`` / ``HF_DATASETS_OFFLINE=1``: a hub dataset fails at once instead of
  retrying; in any case the hook replaces Inspect's ``hf_dataset`` (and the ``inspect_evals``
  wrapper of it) before the task module is imported: with a samples file, the records in it go
  through the task's own ``sample_fields``; without one, the loader raises at once and the
  stage is "not probed: the dataset is on the Hugging Face hub".
* Every outgoing network connection (to anything but loopback) raises at once: a task that
  downloads at run time is refused with the address it tried, instead of waiting on retries.
* Inspect counts tokens with a tokenizer it downloads unless an output carries ``usage``: every
  forged output sets it.
* Inspect loads every package registered under its ``inspect_ai`` entry point when a model is
  created (all of inspect_evals: about 9 s, and any family that cannot import offline logs a
  warning); the hook imports exactly the task's module instead, and marks the entry points
  loaded.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import json
import os
import socket
import sys
import tempfile
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("INSPECT_DISPLAY", "none")
os.environ.setdefault("NO_COLOR", "1")

# Longest input text sent back per sample (the forgeries read numbers and options from it).
MAX_INPUT_CHARS = 20_000


class NeedsDownload(Exception):
    """The task wanted data from the network at run time."""


# --- the network guard ------------------------------------------------------------------

_connect = socket.socket.connect


# `run` lets the model's endpoint through (its host's addresses, and HTTP requests to its base
# URL); everything else stays refused, so a task that downloads is still refused under a model.
_MODEL_HOSTS: set[str] = set()
_MODEL_URL: str | None = None


def _guarded_connect(self: socket.socket, address: Any) -> Any:
    host = address[0] if isinstance(address, tuple) else address
    if (
        isinstance(host, str)
        and host not in ("127.0.0.1", "::1", "localhost")
        and host not in _MODEL_HOSTS
    ):
        raise NeedsDownload(f"the task opened a network connection to {host} at run time")
    return _connect(self, address)


socket.socket.connect = _guarded_connect  # type: ignore[method-assign]


def _refuse_http(name: str, original: Any) -> Any:
    def refuse(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        url = getattr(request, "url", request)
        if _MODEL_URL is not None and str(url).startswith(_MODEL_URL):
            return original(self, request, *args, **kwargs)
        raise NeedsDownload(f"the task downloads {url} at run time")

    refuse.__name__ = name
    return refuse


def _guard_http_clients() -> None:
    """HTTP clients refuse before they connect, so their retry policies (which retry
    connection errors for minutes) never see a connection error to retry."""
    try:
        import httpx

        httpx.HTTPTransport.handle_request = _refuse_http(
            "handle_request", httpx.HTTPTransport.handle_request
        )
        httpx.AsyncHTTPTransport.handle_async_request = _refuse_http(
            "handle_async_request", httpx.AsyncHTTPTransport.handle_async_request
        )
    except ImportError:
        pass
    try:
        import requests.adapters

        requests.adapters.HTTPAdapter.send = _refuse_http(
            "send", requests.adapters.HTTPAdapter.send
        )
    except ImportError:
        pass


def _download_cause(error: BaseException) -> NeedsDownload | None:
    """The refused download behind `error`, however a library wrapped it (an HTTP client's
    connection error, a retry library's last attempt)."""
    seen: set[int] = set()
    todo: list[BaseException | None] = [error]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, NeedsDownload):
            return e
        todo += [e.__cause__, e.__context__]
        attempt = getattr(e, "last_attempt", None)
        if attempt is not None and hasattr(attempt, "exception"):
            todo.append(attempt.exception())
        if "network connection" in str(e) or "All connection attempts failed" in str(e):
            return NeedsDownload(f"the task downloads data at run time ({type(e).__name__})")
    return None


def _no_download(*args: Any, **kwargs: Any) -> Any:
    what = args[0] if args else kwargs.get("repo_id") or kwargs.get("path") or "a file"
    raise NeedsDownload(f"the task downloads {what} from the Hugging Face hub at run time")


# --- local samples in place of hub datasets ---------------------------------------------

_SAMPLES_FILE: Path | None = None
_DATASETS_SERVED: list[str] = []


def _records() -> list[dict[str, Any]]:
    assert _SAMPLES_FILE is not None
    out = []
    with open(_SAMPLES_FILE, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as e:
                raise ValueError(f"{_SAMPLES_FILE}:{n}: not a JSON record: {e}") from e
            if not isinstance(record, dict):
                raise ValueError(f"{_SAMPLES_FILE}:{n}: a record must be a JSON object")
            out.append(record)
    return out


def _served(path: Any, fields: Any, auto_id: bool, limit: Any) -> Any:
    """The samples file's records through the task's own ``sample_fields``, standing in for a
    hub or remote dataset: the file's order, no shuffling; ``limit`` honoured."""
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.dataset._util import data_to_samples, record_to_sample_fn

    if _SAMPLES_FILE is None:
        raise NeedsDownload(
            f"the dataset {path} is on the Hugging Face hub or the network; "
            "give its samples in a local file to probe it"
        )
    samples = data_to_samples(_records(), record_to_sample_fn(fields), bool(auto_id))
    if isinstance(limit, int) and not isinstance(limit, bool):
        samples = samples[:limit]
    _DATASETS_SERVED.append(str(path))
    return MemoryDataset(samples, name=str(path), location=str(_SAMPLES_FILE))


def _is_remote(path: Any) -> bool:
    return isinstance(path, str) and "://" in path


def _standing_in(original: Any, remote_only: bool) -> Any:
    """A loader with `original`'s signature that serves the samples file instead: always (a
    hub loader), or only for a remote path (a file loader: local files load as before)."""
    signature = inspect.signature(original)

    def loader(*args: Any, **kwargs: Any) -> Any:
        bound = signature.bind_partial(*args, **kwargs).arguments
        path = next(iter(bound.values()), None)
        if remote_only and not _is_remote(path):
            return original(*args, **kwargs)
        return _served(
            path, bound.get("sample_fields"), bound.get("auto_id", False), bound.get("limit")
        )

    return loader


def _patch_loaders() -> None:
    """Replaces the dataset loaders before any task module binds them by import: Inspect's
    hub, CSV and JSON loaders, inspect_evals' wrappers of them, and the hub clients'
    downloads."""
    import inspect_ai.dataset as ds
    from inspect_ai.dataset._sources import csv as csv_src
    from inspect_ai.dataset._sources import hf as hf_src
    from inspect_ai.dataset._sources import json as json_src

    hub = _standing_in(hf_src.hf_dataset, remote_only=False)
    ds.hf_dataset = hub  # type: ignore[assignment]
    hf_src.hf_dataset = hub  # type: ignore[assignment]
    for module, name in ((csv_src, "csv_dataset"), (json_src, "json_dataset")):
        loader = _standing_in(getattr(module, name), remote_only=True)
        setattr(module, name, loader)
        setattr(ds, name, loader)
    try:
        import huggingface_hub

        for name in ("hf_hub_download", "snapshot_download"):
            setattr(huggingface_hub, name, _no_download)
    except ImportError:
        pass
    try:
        import datasets

        datasets.load_dataset = _no_download  # type: ignore[assignment]
    except ImportError:
        pass
    try:
        evals_hub = importlib.import_module("inspect_evals.utils.huggingface")
        evals_files = importlib.import_module("inspect_evals.utils.load_dataset")
        evals_utils = importlib.import_module("inspect_evals.utils")
    except ImportError:
        return
    for name in ("load_dataset", "snapshot_download", "hf_hub_download"):
        if hasattr(evals_hub, name):
            setattr(evals_hub, name, _no_download)
    for module in (evals_hub, evals_utils):
        if hasattr(module, "hf_dataset"):
            module.hf_dataset = hub
    for name in ("load_csv_dataset", "load_json_dataset"):
        if hasattr(evals_files, name):
            loader = _standing_in(getattr(evals_files, name), remote_only=True)
            setattr(evals_files, name, loader)
            if hasattr(evals_utils, name):
                setattr(evals_utils, name, loader)


# --- finding the task -------------------------------------------------------------------


def _registry_module(name: str) -> str | None:
    """The module inspect_evals imports `name` from, read off its registry's source (importing
    the registry would import every family)."""
    spec = importlib.util.find_spec("inspect_evals._registry")
    if spec is None or spec.origin is None:
        return None
    tree = ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            if any((a.asname or a.name) == name for a in node.names):
                return node.module
    return None


def _load_task(spec: str, args: dict[str, Any]) -> Any:
    from inspect_ai import Task

    if spec.startswith("inspect_evals/"):
        name = spec.split("/", 1)[1]
        module_name = _registry_module(name)
        if module_name is None:
            raise LookupError(f"inspect_evals has no task `{name}`")
        fn = getattr(importlib.import_module(module_name), name)
    else:
        path, _, fn_name = spec.partition("@")
        file = Path(path)
        if not file.is_file():
            raise LookupError(f"no task file {path}")
        module_spec = importlib.util.spec_from_file_location(f"_ba_tasks_{file.stem}", file)
        if module_spec is None or module_spec.loader is None:
            raise LookupError(f"cannot import {path}")
        module = importlib.util.module_from_spec(module_spec)
        sys.path.insert(0, str(file.parent))
        module_spec.loader.exec_module(module)
        if not fn_name:
            tasks = [
                n
                for n, v in vars(module).items()
                if callable(v) and getattr(v, "__registry_info__", None) is not None
                and getattr(getattr(v, "__registry_info__"), "type", None) == "task"
            ]
            if len(tasks) != 1:
                raise LookupError(
                    f"{path} defines {len(tasks)} tasks ({', '.join(tasks) or 'none'}): "
                    f"name one as {path}@TASK"
                )
            fn_name = tasks[0]
        fn = getattr(module, fn_name, None)
        if fn is None:
            raise LookupError(f"{path} has no task `{fn_name}`")
    task = fn(**args)
    if not isinstance(task, Task):
        raise LookupError(f"{spec} did not return an Inspect Task")
    return task


def _setup(request: dict[str, Any]) -> Any:
    global _SAMPLES_FILE
    samples_file = request.get("samples_file")
    _SAMPLES_FILE = Path(samples_file) if samples_file else None
    if _SAMPLES_FILE is not None and not _SAMPLES_FILE.is_file():
        raise LookupError(f"no samples file {_SAMPLES_FILE}")
    import inspect_ai._util.entrypoints as entrypoints

    entrypoints._inspect_ai_eps_loaded_all = True
    _guard_http_clients()
    _patch_loaders()
    args = request.get("args") or {}
    if not isinstance(args, dict):
        raise ValueError("`args` must be an object")
    return _load_task(str(request["task"]), args)


# --- describing -------------------------------------------------------------------------


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    parts = []
    for message in content:
        text = getattr(message, "text", None)
        if text:
            parts.append(f"{message.role}: {text}")
    return "\n\n".join(parts)


def _names(items: Any) -> list[str]:
    from inspect_ai._util.registry import registry_info, is_registry_object

    out = []
    for item in items if isinstance(items, list) else [items]:
        if item is None:
            continue
        if is_registry_object(item):
            out.append(registry_info(item).name)
        else:
            out.append(getattr(item, "__qualname__", type(item).__name__))
    return out


def _solver_names(solver: Any) -> list[str]:
    steps = getattr(solver, "_solvers", None)
    if steps is not None:
        return [n for s in steps for n in _solver_names(s)]
    return _names(solver)


def _sandbox_of(task: Any, samples: list[Any]) -> str | None:
    spec = task.sandbox or next((s.sandbox for s in samples if s.sandbox), None)
    if spec is None:
        return None
    return getattr(spec, "type", None) or str(spec)


def describe(request: dict[str, Any]) -> dict[str, Any]:
    import inspect_ai
    from importlib.metadata import PackageNotFoundError, version

    try:
        evals_version = version("inspect_evals")
    except PackageNotFoundError:
        evals_version = None
    packages = {"inspect_ai": inspect_ai.__version__, "inspect_evals": evals_version}
    try:
        task = _setup(request)
        samples = list(task.dataset)
    except Exception as e:  # noqa: BLE001 - a download anywhere in the chain is a refusal
        cause = _download_cause(e)
        if cause is None:
            raise
        return {"packages": packages, "task": None, "refused": str(cause), "samples": []}
    stages: dict[str, str] = {}
    sandbox = _sandbox_of(task, samples)
    if sandbox:
        stages["criterion"] = (
            f"the task runs its samples in a `{sandbox}` sandbox, which the audit does not start"
        )
    scorers = _names(task.scorer or [])
    if not scorers:
        stages["criterion"] = "the task has no scorer"
    dataset = {
        "name": task.dataset.name,
        "location": task.dataset.location,
        "samples_total": len(samples),
        "local_file": str(_SAMPLES_FILE) if _DATASETS_SERVED else None,
    }
    out_samples = []
    for s in samples:
        target = s.target if isinstance(s.target, list) else [s.target]
        out_samples.append(
            {
                "id": str(s.id),
                "input": _text(s.input)[:MAX_INPUT_CHARS],
                "targets": [str(t) for t in target],
                "choices": list(s.choices) if s.choices else None,
            }
        )
    return {
        "packages": packages,
        "task": {
            "name": task.name,
            "spec": request["task"],
            "solver": _solver_names(task.solver),
            "scorers": scorers,
            "dataset": dataset,
            "message_limit": task.message_limit,
        },
        "refused": None,
        "stages": stages,
        "samples": out_samples,
    }


# --- scoring ----------------------------------------------------------------------------


def _usage() -> Any:
    from inspect_ai.model import ModelUsage

    return ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)


def score(request: dict[str, Any]) -> dict[str, Any]:
    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import ModelOutput, get_model
    from inspect_ai.scorer import value_to_float
    from inspect_ai.solver._task_state import sample_state

    task = _setup(request)
    by_id = {str(s.id): s for s in task.dataset}
    items = request.get("items") or []
    rows = []
    outputs: dict[str, str] = {}
    for i, item in enumerate(items):
        sample = by_id.get(str(item["id"]))
        if sample is None:
            raise LookupError(f"the task has no sample `{item['id']}`")
        key = f"ba{i:06d}"
        rows.append(sample.model_copy(update={"id": key}, deep=True))
        outputs[key] = str(item["output"])
    calls: dict[str, int] = {}
    # The tools the solver hands the model, besides the answer's `submit`: a scorer may read
    # what the model does with them, which a forged answer never does.
    offered: dict[str, list[str]] = {}

    def respond(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        key = str(sample_state().sample_id)
        n = calls.get(key, 0) + 1
        calls[key] = n
        if n == 1:
            offered[key] = sorted({t.name for t in tools if t.name != "submit"})
        text = outputs.get(key, "") if n == 1 else ""
        submit = next((t for t in tools if t.name == "submit"), None)
        if n == 1 and submit is not None:
            params = list((submit.parameters.properties or {}).keys())
            name = "answer" if "answer" in params else (params[0] if params else "answer")
            out = ModelOutput.for_tool_call("mockllm/model", "submit", {name: text}, content="")
        else:
            out = ModelOutput.from_content(model="mockllm/model", content=text)
        out.usage = _usage()
        return out

    def grade(messages: Any, tools: Any, tool_choice: Any, config: Any) -> Any:
        out = ModelOutput.from_content(model="mockllm/grader", content="")
        out.usage = _usage()
        return out

    to_float = value_to_float()
    dataset = task.dataset

    def play(subset: list[Any]) -> dict[str, Any]:
        task.dataset = MemoryDataset(subset, name=dataset.name, location=dataset.location)
        with tempfile.TemporaryDirectory(prefix="benchaudit-inspect-") as logs:
            results = inspect_eval(
                task,
                model=get_model("mockllm/model", custom_outputs=respond),
                model_roles={"grader": get_model("mockllm/grader", custom_outputs=grade)},
                display="none",
                log_dir=logs,
                log_format="json",
                max_samples=64,
                fail_on_error=False,
                score_display=False,
                epochs=1,
            )
        log = results[0]
        if log.status == "error" and log.error is not None:
            raise RuntimeError(f"Inspect's eval failed: {log.error.message}")
        return {str(s.id): s for s in (log.samples or [])}

    # The first item alone first: a solver that asks the model more than once (an agent loop)
    # makes every forged answer moot, and playing a whole batch of such loops can take many
    # minutes, so the rest is played only when the first took one model call.
    by_key = play(rows[:1]) if rows else {}
    first = by_key.get("ba000000")
    loop_calls = _model_calls(first)[0] if first is not None else 0
    if len(rows) > 1 and loop_calls <= 1:
        by_key.update(play(rows[1:]))
    answers = []
    for i, item in enumerate(items):
        key = f"ba{i:06d}"
        sample = by_key.get(key)
        if sample is None and loop_calls > 1:
            answers.append(
                {
                    "scores": {},
                    "solver_calls": loop_calls,
                    "error": f"not played: the solver asked the model {loop_calls} times on the batch's first answer (an agent loop)",
                }
            )
            continue
        if sample is None:
            answers.append({"scores": {}, "error": "Inspect returned no result for this sample"})
            continue
        answers.append(dict(_result(sample, to_float), tools=offered.get(key, [])))
    return {"results": answers}


def _result(sample: Any, to_float: Any) -> dict[str, Any]:
    """One played sample as the protocol states it: every scorer's value (a dict-valued score
    is one value per key, ``name/key``), the answer each read, the model calls the solver and
    each scorer made, the completion and the sample's error."""
    solver_calls, scorer_calls = _model_calls(sample)
    scores = {}
    for name, s in (sample.scores or {}).items():
        value = s.value
        if isinstance(value, dict):
            for k, v in value.items():
                scores[f"{name}/{k}"] = {"value": _float(to_float, v), "answer": s.answer}
        else:
            scores[name] = {"value": _float(to_float, value), "answer": s.answer}
    return {
        "scores": scores,
        "solver_calls": solver_calls,
        "scorer_calls": scorer_calls,
        "completion": sample.output.completion if sample.output else None,
        "error": sample.error.message if sample.error else None,
    }


# --- a real model: Inspect epochs as seeds ----------------------------------------------

# Longest completion sent back per run (the whole text is in the Inspect log).
MAX_COMPLETION_CHARS = 2_000


def run_model(request: dict[str, Any]) -> dict[str, Any]:
    """The task's own solver and scorers with a real model: one Inspect eval per seed (the
    seed set in the generate config, so each trial is reproducible where the endpoint honours
    seeds), on the requested samples. The model is reached through Inspect's OpenAI-compatible
    provider (``openai-api/benchaudit/MODEL``); the key, when the request names its variable,
    goes to the provider through ``BENCHAUDIT_API_KEY`` in this process only, never into the
    request, the answer or a log. Each eval's log is written under ``log_dir`` (Inspect's own
    format: ``inspect view`` and ``benchaudit import`` read it)."""
    global _MODEL_URL
    from urllib.parse import urlparse

    from inspect_ai import eval as inspect_eval
    from inspect_ai.dataset import MemoryDataset
    from inspect_ai.model import GenerateConfig, get_model
    from inspect_ai.scorer import value_to_float

    model = request.get("model") or {}
    name, base_url = model.get("model"), model.get("base_url")
    if not name or not base_url:
        raise ValueError("the run request needs model.model and model.base_url")
    seeds = [int(x) for x in request.get("seeds") or []]
    if not seeds:
        raise ValueError("the run request names no seeds")
    key_var = model.get("api_key_env")
    key = os.environ.get(key_var) if key_var else None
    if key_var and not key:
        raise ValueError(f"the key variable {key_var} is not set")
    os.environ["BENCHAUDIT_API_KEY"] = key or "none"
    # The endpoint's host is let through the network guard, nothing else.
    _MODEL_URL = base_url.rstrip("/")
    host = urlparse(base_url).hostname or ""
    try:
        _MODEL_HOSTS.update(
            info[4][0] for info in socket.getaddrinfo(host, None) if info[4]
        )
    except OSError as e:
        raise ValueError(f"cannot resolve the model's host {host}: {e}") from e
    _MODEL_HOSTS.add(host)

    task = _setup(request)
    by_id = {str(s.id): s for s in task.dataset}
    wanted = [str(x) for x in request.get("samples") or []]
    missing = [x for x in wanted if x not in by_id]
    if missing:
        raise LookupError(f"the task has no sample `{missing[0]}`")
    dataset = task.dataset
    task.dataset = MemoryDataset(
        [by_id[x] for x in wanted], name=dataset.name, location=dataset.location
    )
    log_root = request.get("log_dir")
    max_tokens = request.get("max_tokens")
    to_float = value_to_float()
    runs: list[dict[str, Any]] = []
    logs: list[str] = []
    for seed in seeds:
        config = GenerateConfig(
            seed=seed,
            max_tokens=int(max_tokens) if max_tokens else None,
            max_retries=int(request.get("max_retries", 2)),
            timeout=int(request.get("request_timeout", 600)),
        )
        with tempfile.TemporaryDirectory(prefix="benchaudit-inspect-") as scratch:
            log_dir = Path(log_root) / f"seed-{seed}" if log_root else Path(scratch)
            results = inspect_eval(
                task,
                model=get_model(f"openai-api/benchaudit/{name}", base_url=base_url, config=config),
                display="none",
                log_dir=str(log_dir),
                fail_on_error=False,
                score_display=False,
                epochs=1,
            )
            log = results[0]
            if log_root:
                logs.append(str(Path(log.location).relative_to(Path(log_root))))
        if log.status == "error" and log.error is not None and not log.samples:
            raise RuntimeError(f"Inspect's eval failed: {log.error.message}")
        played = {str(s.id): s for s in (log.samples or [])}
        for sample_id in wanted:
            sample = played.get(sample_id)
            if sample is None:
                runs.append(
                    {"sample": sample_id, "seed": seed, "scores": {},
                     "error": "Inspect returned no result for this sample"}
                )
                continue
            r = _result(sample, to_float)
            completion = r.get("completion")
            if isinstance(completion, str) and len(completion) > MAX_COMPLETION_CHARS:
                r["completion"] = completion[:MAX_COMPLETION_CHARS]
            calls = [e for e in sample.events if e.event == "model"]
            r.update(
                sample=sample_id,
                seed=seed,
                requests=len(calls),
                failed_requests=sum(1 for e in calls if e.error),
            )
            runs.append(r)
    import inspect_ai

    return {
        "model": {"name": model.get("name"), "provider": f"openai-api/benchaudit/{name}"},
        "settings": {
            "seeds": seeds,
            "max_tokens": int(max_tokens) if max_tokens else None,
            "epochs_per_seed": 1,
            "inspect_ai": inspect_ai.__version__,
        },
        "logs": logs,
        "runs": runs,
    }


def _model_calls(sample: Any) -> tuple[int, dict[str, int]]:
    """The sample's model calls read off Inspect's event log: those the solver made, and those
    made inside each scorer's span (a model-graded scorer's)."""
    spans: dict[str, tuple[str, str]] = {}
    solver_calls = 0
    scorer_calls: dict[str, int] = {}
    for event in sample.events:
        kind = event.event
        if kind == "span_begin":
            spans[event.id] = (event.type or "", event.name)
        elif kind == "model":
            span_type, span_name = spans.get(event.span_id or "", ("", ""))
            if span_type == "scorer":
                scorer_calls[span_name] = scorer_calls.get(span_name, 0) + 1
            else:
                solver_calls += 1
    return solver_calls, scorer_calls


def _float(to_float: Any, value: Any) -> float | None:
    try:
        x = float(to_float(value))
    except (TypeError, ValueError):
        return None
    return x if x == x and abs(x) != float("inf") else None


def main() -> int:
    ops = {"describe": describe, "score": score, "run": run_model}
    if len(sys.argv) != 2 or sys.argv[1] not in ops:
        print("usage: hook.py describe|score|run < request.json", file=sys.stderr)
        return 2
    request = json.load(sys.stdin)
    try:
        answer = ops[sys.argv[1]](request)
    except (LookupError, ValueError, NeedsDownload) as e:
        # The task cannot be found, needs the network or its request is wrong: one line, no
        # traceback.
        print(f"benchaudit inspect hook: {e}", file=sys.stderr)
        return 1
    json.dump(answer, sys.stdout, sort_keys=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
