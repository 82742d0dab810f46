"""Let `bfcl_eval`'s checker import without the provider SDKs it never calls.

Why: `bfcl_eval.eval_checker.ast_eval.ast_checker` imports `constants.model_config`, which imports
every model handler, and each handler imports its provider's SDK (openai, anthropic, mistralai, …)
at module level. The AST checker and the prompt-mode decoder use none of them, so the BFCL target
installs the wheel with `--no-deps` plus the few packages the checker really runs (tree-sitter and
its Java and JavaScript grammars, overrides, tenacity, filelock, python-dotenv, tqdm: see
requirements.txt) and lets the names below resolve to inert placeholders.

The rule, kept small on purpose:
* only the top-level names in `ABSENT` are ever replaced, and only when no installed package
  provides them (a real SDK, if present, always wins);
* a placeholder module hands out placeholder classes, so BFCL's module-level
  `from openai import OpenAI`, annotations such as `list[cohere.types.ToolV2]` and subclassing work;
* constructing a placeholder gives an inert object (a handler's `__init__` builds a client), but
  touching any attribute of that object raises `AbsentSdkError`, so no SDK behaviour (and no
  network call) can ever run silently.

`test_hook.py` checks each rule.
"""

import importlib.abc
import importlib.machinery
import sys
import types

# Provider SDKs and HTTP clients imported by model handlers, plus numpy/pandas, which
# eval_runner_helper imports only to write leaderboard CSVs.
ABSENT = (
    "anthropic",
    "boto3",
    "cohere",
    "datamodel_code_generator",
    "google",
    "httpx",
    "mistralai",
    "numpy",
    "openai",
    "pandas",
    "qwen_agent",
    "requests",
    "writerai",
)


class AbsentSdkError(RuntimeError):
    """Raised when code tries to use a provider SDK that the BFCL target does not install."""


class _Instance:
    __slots__ = ("_origin",)

    def __init__(self, origin):
        object.__setattr__(self, "_origin", origin)

    def __getattr__(self, name):
        raise AbsentSdkError(
            f"{self._origin}.{name}: the provider SDK is not installed "
            "(the BenchAudit BFCL target runs only the AST checker)"
        )

    def __setattr__(self, name, value):
        raise AbsentSdkError(f"{self._origin}: the provider SDK is not installed")


class _PlaceholderType(type):
    """The type of every placeholder class: attributes are placeholders, instances are inert."""

    def __getattr__(cls, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _PlaceholderType(name, (), {"__module__": cls.__module__})

    def __getitem__(cls, item):
        return cls

    def __or__(cls, other):
        return cls

    def __ror__(cls, other):
        return cls

    def __call__(cls, *args, **kwargs):
        return _Instance(f"{cls.__module__}.{cls.__name__}")


class _PlaceholderModule(types.ModuleType):
    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return _PlaceholderType(name, (), {"__module__": self.__name__})


class _Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] not in ABSENT:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            if finder.find_spec(name, path, target) is not None:
                return None  # the real package is installed: use it
        return importlib.machinery.ModuleSpec(name, self, is_package=True)

    def create_module(self, spec):
        return _PlaceholderModule(spec.name)

    def exec_module(self, module):
        module.__path__ = []
        module.__benchaudit_placeholder__ = True


def install():
    """Adds the finder once, after every real finder."""
    if not any(isinstance(f, _Finder) for f in sys.meta_path):
        sys.meta_path.append(_Finder())


def placeholders():
    """The names that resolved to placeholders in this process."""
    return sorted(
        name
        for name, module in sys.modules.items()
        if getattr(module, "__benchaudit_placeholder__", False) and "." not in name
    )
