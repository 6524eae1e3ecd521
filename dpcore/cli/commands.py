"""What each subcommand does, through the library functions the app calls (issue 67).

A draw goes exactly the app's way (:mod:`dpcore.store.draw`): :func:`~dpcore.store.draw.settings`,
:func:`~dpcore.store.draw.fit_private` with unpredictable noise, then
:func:`~dpcore.store.draw.record_fit` (reserve before reveal: nothing is printed before the store has
recorded the spend).  The role and the cap are asked before the data is read or fitted, so a refused
draw never touches the data.  Results go to standard output; sentences and progress to standard error.
"""
from __future__ import annotations

import contextlib
import json
import re
import warnings

import numpy as np

from .data import DEFAULT_MAX_CONTRIBUTIONS, Usage, extra_params, open_data


class Refused(Exception):
    """The cap, a role or the store refused (exit status 3): nothing was recorded."""


#: Who the command line acts as (the local data owner, as the app's local mode is).
def identity() -> str:
    """``user@host (command line)``: what the store records as who acted."""
    from ..store.roles import local_identity
    return local_identity("command line")


def open_store(*, create: bool = True):
    """The app's release store (``$DPCORE_STORE``, else the default file), acting for :func:`identity`
    when the store has roles (it then refuses what that identity may not do)."""
    from ..store import ReleaseStore
    store = ReleaseStore(None, create=create)
    return store.acting_as(identity()) if store.roles() else store


def plain(markdown: str) -> str:
    """A sentence for the terminal: Markdown bold removed."""
    return re.sub(r"\*\*(.+?)\*\*", r"\1", markdown)


class StderrBar:
    """The app's progress bar on standard error: ``[#####.....]  43 %  <the same words as the app>``.

    On a terminal the line is redrawn in place; otherwise (a log file, cron) one line per pass.
    """

    def __init__(self, stream):
        self.stream, self.tty, self.last = stream, stream.isatty(), ""

    def __call__(self, fraction: float, text: str) -> None:
        if self.tty:
            filled = int(round(20 * fraction))
            self.stream.write(f"\r[{'#' * filled}{'.' * (20 - filled)}] {100 * fraction:3.0f} %  {text}\033[K")
        elif text != self.last:
            self.stream.write(text + "\n")
        self.last = text
        self.stream.flush()

    def close(self) -> None:
        if self.tty and self.last:
            self.stream.write("\r\033[K")
            self.stream.flush()


def _algorithm(key: str):
    from ..algorithms.registry import releasable
    try:
        cls = releasable(key)
    except KeyError:
        cls = None
    if cls is None or not cls.private:
        from ..algorithms.registry import ALGORITHMS
        keys = ", ".join(k for k, c in ALGORITHMS.items() if c.private)
        raise Usage(f"--algorithm {key!r} is not a private algorithm; choose one of: {keys}")
    return cls


def _params(args, key: str, cls) -> dict:
    """The estimator's parameters from the options (ε, k, δ, ``--param``), checked against the class."""
    names = set(cls().get_params(deep=False))
    params: dict = {"epsilon": args.epsilon}
    k = getattr(args, "n_clusters", None)
    if k is not None:
        if "n_clusters" not in names:
            raise Usage(f"{cls.display_name} finds its clusters itself: drop --n-clusters")
        params["n_clusters"] = k
    elif "n_clusters" in names and key != "sanitize":
        raise Usage(f"{cls.display_name} needs k: add --n-clusters K")
    if cls.needs_delta:
        if args.delta is None:
            raise Usage(f"{cls.display_name} is (ε, δ)-private: add --delta D (e.g. 1e-8, below 1/rows)")
        params["delta"] = args.delta
    elif args.delta:
        raise Usage(f"{cls.display_name} is pure ε-private: drop --delta")
    for name, value in extra_params(args).items():
        if name not in names or name in ("epsilon", "delta", "bounds", "random_state"):
            raise Usage(f"{cls.display_name} has no parameter {name!r} to set with --param")
        params[name] = value
    return params


def _account_name(store, data, requested: str | None, err) -> str:
    """The account to draw on: the name asked for, or the one these rows are registered under (as the app).

    Only an owner (or a store without roles) may ask the store whether content is registered (issue 55).
    """
    name = requested or data.name
    if store.actor is not None and store.role(store.actor)[0] != "owner":
        return name
    known = store.dataset_for_fingerprint(data.fingerprint.split(":")[0], former=data.former)
    if known is None or known == name:
        return name
    if requested:
        raise Refused(f"these rows are already registered in the release store as {known!r}: its account and total "
                      f"apply (the same rows in any file are the same people). Draw with --name {known!r}, or leave "
                      "--name out. Nothing was recorded.")
    err.write(f"These rows are already registered as {known!r}: its account and total apply.\n")
    return known


def _unit(args, data, params: dict, key: str):
    """Person level (the app's default when the data say whose each row is): L and the rows' persons."""
    if data.unit_column is None or args.row_level:
        if args.max_contributions is not None:
            raise Usage("--max-contributions needs a person column: add --privacy-id COL")
        return None
    params["max_contributions"] = args.max_contributions or DEFAULT_MAX_CONTRIBUTIONS
    # As the app: the registry's default (weighting) where this algorithm can weight, else sampling (issue 68).
    from ..algorithms.registry import bounding_for
    params["contribution_bounding"] = bounding_for(key, args.bounding)
    if args.bounding and params["contribution_bounding"] != args.bounding:
        raise Usage(f"{_algorithm(key).display_name} cannot weight a person's rows (it needs whole rows): "
                    "use --bounding sample, or leave --bounding out")
    if data.is_source:
        return data.unit_column
    import pandas as pd
    return pd.Series(data.units, name=data.unit_column)


def draw(args, out, err, *, algorithm: str | None = None) -> int:
    """``draw`` and ``sanitize``: read the data, fit with fresh noise, record, then print."""
    from ..algorithms.base import unsupported_error
    from ..algorithms.regime import OutOfRegimeError
    from ..exceptions import AccessDeniedError, BudgetExceededError, InfeasibleBudgetError, StoreError
    from ..release import guarantee_sentence, to_json
    from ..sources import SourceError
    from ..sources.progress import PassProgress, watching
    from ..store import draw as D
    from ..store.roles import draw_refusal
    from ..store.totals import account_sentence
    from .data import BadData

    key = algorithm or args.algorithm
    cls = _algorithm(key)
    params = _params(args, key, cls)
    store = open_store()
    who = identity()
    if store.actor is not None:     # the role first: a refused draw never reads the data
        why = draw_refusal(store, args.name or "") if args.name else (
            f"{store.actor} is a viewer here: drawing needs the analyst or owner role."
            if store.role(store.actor)[0] == "viewer" else None)
        if why:
            raise Refused(why + " Nothing was recorded.")
    data = open_data(args)
    for note in data.notes:
        err.write(note + "\n")
    if data.is_source and not cls.accepts_source:
        raise Usage(str(unsupported_error(cls.display_name)))
    name = _account_name(store, data, args.name, err)
    why = draw_refusal(store, name, register_hint=" (an owner's first draw on it, or cap)")
    if why:
        raise Refused(why + " Nothing was recorded.")
    privacy_id = _unit(args, data, params, key)
    why = store.refusal(name, params["epsilon"], params.get("delta") or 0.0)
    if why:          # the cap, asked before the fit with the ε granted (a draw spends at most that)
        raise Refused(why)
    s = D.settings(name, data.fingerprint, key, params, bounds=data.bounds, d=len(data.columns))
    bounds = (np.asarray(s.bounds[0]), np.asarray(s.bounds[1])) if s.bounds is not None else None
    bar = StderrBar(err)
    # The bar names each pass over a large source, as the app's bar does for non-private steps.  The app shows
    # only a spinner while a private fit runs (the number of passes can follow a noisy size, issue 29); here the
    # person watching is the one who reads the rows themselves, so the passes tell them nothing new.
    watch = watching(data.X, PassProgress("Private release", getattr(data.X, "engine", None), bar)) \
        if data.is_source else contextlib.nullcontext()
    try:
        with watch, warnings.catch_warnings(record=True) as said:
            warnings.simplefilter("always")
            est = D.fit_private(s, data.X, bounds=bounds, privacy_id=privacy_id)
    except Exception as exc:
        bar.close()
        rid = D.record_refusal(store, s, exc, who=who, description=data.title, former=data.former)
        ledger = getattr(exc, "spent_budget", None)     # what the fit spent before it stopped (dpcore.store.draw)
        spent = (f" The fit had spent ε = {ledger.total()[0]:.4g} before it stopped: recorded as #{rid}."
                 if rid is not None and ledger is not None else " Nothing was recorded.")
        if isinstance(exc, (OutOfRegimeError, InfeasibleBudgetError)):
            raise Refused(f"{cls.display_name} refused: {exc}{spent}") from None
        if isinstance(exc, SourceError):
            raise
        if isinstance(exc, (ValueError, TypeError)):
            raise BadData(f"{cls.display_name} could not run on this data: {exc}{spent}") from None
        raise
    bar.close()
    for w in said:
        if not issubclass(w.category, DeprecationWarning):
            err.write(f"Note: {w.message}\n")
    try:
        rid, rel = D.record_fit(store, s, est, who=who, columns=data.columns, description=data.title,
                                kind=data.kind, new_draw=True, former=data.former)
    except (BudgetExceededError, AccessDeniedError) as exc:
        raise Refused(str(exc)) from None
    except StoreError:
        raise
    except ValueError as exc:    # the store's own refusals: another data set under this name, ...
        raise Refused(f"the release store refused this draw: {exc} Nothing was recorded.") from None
    del est      # from here on only the recorded release exists, as in the app
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(to_json(rel))
    out.write(f"release #{rid}: {cls.display_name}" + (f", k = {params['n_clusters']}" if "n_clusters" in params
                                                       else "") + f", ε = {params['epsilon']:g} on {name}\n")
    out.write(guarantee_sentence(rel) + ".\n")
    out.write(plain(account_sentence(store, name, rel, kind=data.kind)) + "\n")
    syn = rel.get("synopsis") or {}
    if syn.get("kind") == "points":
        out.write(f"A sanitized database of {len(syn['weights'])} weighted points: analyse it at any k for free, "
                  f"e.g. python -m dpcore analyse {rid} --n-clusters 10\n")
    else:
        out.write(f"centres ({', '.join(data.columns)}), one per line:\n")
        for row in rel["centroids"]:
            out.write(",".join(f"{v:.10g}" for v in row) + "\n")
    return 0


def cap(args, out, err) -> int:
    """Show the data's total, or set it (owners only; never below what is spent)."""
    from ..exceptions import AccessDeniedError
    from ..store.totals import account_sentence
    store = open_store()
    if args.epsilon is not None and store.actor is not None and store.role(store.actor)[0] != "owner":
        raise Refused(f"{store.actor} may not set a data set's total here: that needs the owner role (the store "
                      "checks it too). Ask the data owner.")
    if args.epsilon is not None and store.dataset_info(args.name) is None:
        # A new account is keyed by its rows from the start, as a draw keys it: a total set on a bare name would
        # leave the account without a key, and an upload of the same rows in the app would open another one.
        if args.data is None:
            raise Usage(f"the release store has no data set named {args.name!r} yet: name its data too, "
                        f"--data FILE --columns C1,C2 --lower=L1,L2 --upper=U1,U2 (as for draw), so that its "
                        "account is tied to its rows")
        data = open_data(args)
        name = _account_name(store, data, args.name, err)
        try:
            store.register_dataset(name, fingerprint=data.fingerprint.split(":")[0], bounds=data.bounds,
                                   description=data.title, former=data.former)
        except (ValueError, AccessDeniedError) as exc:
            raise Refused(f"the data set cannot be registered: {exc}") from None
    if args.epsilon is not None:
        try:
            store.set_cap(args.name, args.epsilon, args.delta, who=identity())
        except (ValueError, AccessDeniedError) as exc:
            raise Refused(f"that total cannot be set: {exc}") from None
        out.write(f"The total for {args.name} is now ε = {args.epsilon:g}" +
                  (f", δ = {args.delta:.3g}" if args.delta else "") + ".\n")
    elif store.dataset_info(args.name) is None:
        raise Usage(f"the release store has no data set named {args.name!r} (set a total with --epsilon TOTAL)")
    out.write(plain(account_sentence(store, args.name)) + "\n")
    return 0


def history(args, out, err) -> int:
    """The ledger of one data set: every draw with id, ε, who, when, published or not."""
    import pandas as pd

    from ..store.totals import account_sentence
    store = open_store(create=False)
    rows = store.history(args.name)
    if not rows and store.dataset_info(args.name) is None:
        raise Usage(f"the release store has no data set named {args.name!r}")
    table = []
    for r in rows:
        pub = store.publication(r["id"])
        table.append({"release": f"#{r['id']}", "time (UTC)": str(r["time"])[:19].replace("T", " "),
                      "algorithm": r["algorithm"], "ε": f"{r['epsilon']:.4g}", "δ": f"{r['delta']:.3g}",
                      "ε so far": f"{r['total_epsilon']:.4g}",
                      "total set": "none" if r["cap_epsilon"] is None else f"{r['cap_epsilon']:.4g}",
                      "published": "no" if pub is None else f"{pub[1]:%Y-%m-%d} by {pub[0]}", "drawn by": r["who"]})
    if table:
        frame = pd.DataFrame(table)
        if not any(r["delta"] for r in rows):
            frame = frame.drop(columns="δ")
        out.write(frame.to_string(index=False) + "\n")
    else:
        out.write(f"No draw recorded on {args.name} yet.\n")
    out.write(plain(account_sentence(store, args.name)) + "\n")
    return 0


def _release(store, release_id: int, *, action: str):
    """A recorded release by id; an unpublished draw only for its own author (published ones are everyone's)."""
    from ..release.build import REFUSAL_FORMAT
    from ..store.roles import same_person
    try:
        stored = store.release(release_id)
    except KeyError:
        raise Usage(f"the release store has no release #{release_id}") from None
    if stored.release.get("format") == REFUSAL_FORMAT:
        raise Usage(f"#{release_id} records a refusal (budget spent, no result): there is nothing to {action}")
    if not stored.is_published and not same_person(stored.who, identity()):
        raise Refused(f"release #{release_id} is an unpublished draw of someone else's ({stored.who}); only its "
                      f"author may {action} it until it is published. Nothing was recorded.")
    return stored


def publish(args, out, err) -> int:
    """Publish a recorded draw (no ε: post-processing of a charged draw); asks for ``--yes`` first."""
    from ..exceptions import AccessDeniedError
    from ..explain import cap_words
    store = open_store()
    try:
        stored = store.release(args.id)
    except KeyError:
        raise Usage(f"the release store has no release #{args.id}") from None
    rel = stored.release
    spent = store.spent(stored.dataset)[0]
    cap_ = store.cap(stored.dataset)
    what = ("its weighted points" if (rel.get("synopsis") or {}).get("kind") == "points" else
            "its private centres" + (", its noisy synopsis" if rel.get("synopsis") else ""))
    sentence = (f"Publishing release #{args.id} shows anyone who opens the public gallery {what}, its ε = "
                f"{stored.epsilon:.4g} and budget ledger, the data set's name ({stored.dataset}) and its account, "
                f"under the name “{identity()}”. It cannot be unpublished. ε spent so far on this data (every draw, "
                f"published or not): {spent:.4g} ({cap_words(spent, cap_[0] if cap_ else None)}).")
    if not args.yes:
        err.write(sentence + " Nothing was published: add --yes to publish it.\n")
        return 2
    try:
        store.publish(args.id, who=identity())
    except AccessDeniedError as exc:
        raise Refused(str(exc)) from None
    except ValueError as exc:
        raise Usage(str(exc)) from None
    out.write(f"release #{args.id} is published: the public gallery shows it. It spent no further ε.\n")
    return 0


def verify(args, out, err) -> int:
    """Walk every hash chain of the store; name the first altered row."""
    report = open_store(create=False).verify()
    if report.ok:
        out.write(f"The release store's hash chains are intact ({report.checked} rows checked). Keyed heads, to "
                  "write down and compare later:\n")
        for table, head in report.heads.items():
            out.write(f"  {table}: {head}\n")
        return 0
    table, row, reason = report.first_broken
    err.write(f"The release store was altered: row {row} of table {table}: {reason}.\n")
    return 1


def export(args, out, err) -> int:
    """A recorded release in one of :data:`dpcore.release.as_code.FORMATS`, to a file or standard output."""
    from ..release.as_code import render
    from ..store.totals import account_sentence
    store = open_store(create=False)
    stored = _release(store, args.id, action="export")
    account = account_sentence(store, stored.dataset, stored.release) if args.format in ("html", "ipynb") else None
    text = render(stored.release, args.format, release_id=stored.id, account=account, data_path=args.data)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
        err.write(f"Wrote release #{stored.id} ({args.format}) to {args.out}.\n")
    else:
        out.write(text if text.endswith("\n") else text + "\n")
    return 0


def analyse(args, out, err) -> int:
    """k-means at any k on a release's released points: post-processing, no ε, nothing recorded."""
    from ..release.view import released_points
    from .data import BadData
    store = open_store(create=False)
    stored = _release(store, args.id, action="analyse")
    try:
        points = released_points(stored.release)
    except ValueError as exc:
        raise BadData(f"release #{stored.id}: {exc}") from None
    centres = points.kmeans(args.n_clusters, random_state=0)
    cols = list(stored.release["dataset"]["columns"])
    err.write(f"k-means with k = {args.n_clusters} on the {points.size} released points of release #{stored.id} "
              f"(drawn at ε = {stored.epsilon:.4g}): post-processing of the release, so no ε is spent and nothing "
              "is recorded.\n")
    out.write(f"centres ({', '.join(cols)}), one per line:\n")
    for row in centres:
        out.write(",".join(f"{v:.10g}" for v in row) + "\n")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump({"release_id": stored.id, "n_clusters": args.n_clusters, "columns": cols,
                       "centres": centres.tolist()}, fh, indent=1)
    return 0


COMMANDS = {"draw": draw, "sanitize": lambda a, o, e: draw(a, o, e, algorithm="sanitize"), "cap": cap,
            "history": history, "publish": publish, "verify": verify, "export": export, "analyse": analyse}

__all__ = ["COMMANDS", "Refused", "identity", "open_store", "StderrBar"]
