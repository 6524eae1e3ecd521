"""Simulated fits side by side (dpcore.utils.threads) and the fixed-point sums computed once a fit.

Both are speed changes (issue 56, the pages' first render): they must change no figure.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import dpcore.utils.threads as threads
from dpcore.evaluation.accuracy import epsilon_for_accuracy
from dpcore.utils.fixedpoint import label_sums, quantize, quantized_label_sums
from dpcore.utils.threads import ordered_map


@pytest.mark.parametrize("workers", [1, 2, 3])
def test_ordered_map_yields_every_result_and_exception_in_the_items_order(workers):
    def square(x):
        if x == 4:
            raise KeyError(x)
        return x * x

    out = []
    for fut in ordered_map(square, range(9), workers=workers):
        try:
            out.append(fut.result())
        except KeyError:
            out.append("refused")
    assert out == [0, 1, 4, 9, "refused", 25, 36, 49, 64]


def test_ordered_map_stops_early_and_wastes_at_most_its_workers_calls():
    started = []

    def record(x):
        started.append(x)
        return x

    for fut in ordered_map(record, range(1000), workers=2):
        if fut.result() == 2:
            break
    assert sorted(started)[:3] == [0, 1, 2] and len(started) <= 2 + 1 + 2


def test_seeded_simulations_give_the_same_answer_on_one_thread_or_several(monkeypatch):
    rng = np.random.default_rng(5)
    X = np.concatenate([rng.normal(c, 0.05, size=(400, 2)) for c in (-0.5, 0.0, 0.5)])
    bounds = (np.full(2, -1.0), np.full(2, 1.0))
    answers = []
    for cores in (1, 2):
        monkeypatch.setattr(threads, "available_cores", lambda cores=cores: cores)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            answers.append(epsilon_for_accuracy("eugkm", 0.05, bounds=bounds, n_clusters=3, X=X,
                                                epsilons=(0.5, 2.0), n_releases=6, random_state=11))
    np.testing.assert_array_equal(answers[0].band, answers[1].band)
    assert answers[0].epsilon == answers[1].epsilon


def test_sums_of_rows_quantised_once_are_label_sums():
    rng = np.random.default_rng(2)
    Z = rng.uniform(-3.0, 3.0, size=(5000, 7)).astype(np.float32)
    labels = rng.integers(0, 4, size=5000)
    counts, sums = label_sums(labels, Z, 4, scale=3.0)
    q = quantize(Z / 3.0).astype(np.int32)
    counts2, sums2 = quantized_label_sums(labels, q, 4)
    np.testing.assert_array_equal(counts, counts2)
    np.testing.assert_array_equal(sums.q, sums2.q)
    with pytest.raises(ValueError, match="integers"):
        quantized_label_sums(labels, Z, 4)


def test_label_sums_are_the_exact_integer_sums_and_refuse_labels_out_of_range():
    rng = np.random.default_rng(8)
    Z = rng.uniform(-1.0, 1.0, size=(3000, 5))
    labels = rng.integers(0, 3, size=3000)
    counts, sums = label_sums(labels, Z, 3)
    q = quantize(Z)
    for j in range(3):
        assert counts[j] == int((labels == j).sum())
        assert [int(v) for v in sums.q[j]] == [sum(int(x) for x in q[labels == j, c]) for c in range(5)]
    with pytest.raises(ValueError, match=r"labels must lie in \[0, 3\)"):
        label_sums(np.full(3000, 3), Z, 3)


def test_sums_of_no_rows_are_zero():
    counts, sums = quantized_label_sums(np.zeros(0, dtype=int), np.zeros((0, 4), dtype=np.int32), 2)
    assert counts.tolist() == [0, 0] and sums.q.shape == (2, 4) and not sums.q.any()


def test_the_thread_count_follows_its_environment_variable(monkeypatch):
    monkeypatch.setenv(threads.THREADS_ENV, "3")
    assert threads.available_cores() == 3
    monkeypatch.setenv(threads.THREADS_ENV, "0")
    with pytest.raises(ValueError, match="positive integer"):
        threads.available_cores()
    monkeypatch.delenv(threads.THREADS_ENV)
    assert threads.available_cores() >= 1
