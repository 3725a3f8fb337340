"""Inference-log tail: parsing, rotation, truncation, resume after restart."""

from __future__ import annotations

import json
import os

from collector.sources.logtail import LogTailSource


def _line(latency=10.0, status="ok", length=100, score=0.5, batch=4):
    rec = {
        "ts": 1.0,
        "latency_ms": latency,
        "batch_size": batch,
        "input_length": length,
        "score": score,
        "status": status,
    }
    return json.dumps(rec) + "\n"


def _append(path, text):
    with open(path, "a") as fh:
        fh.write(text)


def _get(reading, name, **labels):
    return next(
        (
            s.value
            for s in reading.samples
            if s.name == name and all(s.labels.get(k) == v for k, v in labels.items())
        ),
        None,
    )


def _count(reading):
    return _get(reading, "model_input_length_count") or 0


def test_new_lines_become_model_metrics(tmp_path):
    log = tmp_path / "inference.log"
    log.write_text(_line() * 3)  # written before the first start: not read
    clock = iter([0.0, 10.0, 20.0])
    source = LogTailSource(str(log), labels={"model": "m"}, monotonic=lambda: next(clock))
    _append(
        log,
        _line(status="error")
        + _line(latency=30, status="timeout", length=600)
        + "not json\n"
        + _line(status="fallback", batch=8)
        + '{"latency_ms": 5',
    )
    reading = source.sample()
    assert _get(reading, "model_requests_per_second") == 0.3
    assert _get(reading, "model_error_rate") == _get(reading, "model_timeout_rate") == 1 / 3
    assert _get(reading, "model_batch_size_mean") == 16 / 3
    assert _get(reading, "model_input_length_bucket", le="512") == 2
    assert _get(reading, "model_input_length_bucket", le="1024") == 3
    assert source.bad_lines == 1
    _append(log, ', "status": "ok"}\n')  # the partial line completes
    assert _get(source.sample(), "model_requests_total", status="ok") == 1


def test_custom_field_names(tmp_path):
    log = tmp_path / "x.log"
    log.write_text("")
    source = LogTailSource(
        str(log), labels={"model": "m"}, fields={"latency_ms": "dur", "input_length": "tokens"}
    )
    _append(log, json.dumps({"dur": 12.0, "tokens": 300}) + "\n")
    reading = source.sample()
    assert _get(reading, "model_latency_p50_ms") is not None
    assert _get(reading, "model_input_length_bucket", le="512") == 1


def test_rotation_reads_the_old_file_to_its_end_then_the_new_one(tmp_path):
    log = tmp_path / "inference.log"
    log.write_text("")
    source = LogTailSource(str(log), labels={"model": "m"})
    _append(log, _line() * 2)
    assert _count(source.sample()) == 2
    _append(log, _line() * 3)  # written just before rotation, not yet read
    os.rename(log, tmp_path / "inference.log.1")
    log.write_text(_line() * 4)
    assert _count(source.sample()) == 2 + 3 + 4
    _append(log, _line())
    assert _count(source.sample()) == 10


def test_truncation_starts_again_from_the_beginning(tmp_path):
    log = tmp_path / "inference.log"
    log.write_text("")
    source = LogTailSource(str(log), labels={"model": "m"})
    _append(log, _line() * 5)
    assert _count(source.sample()) == 5
    with open(log, "w") as fh:  # copytruncate
        fh.write(_line() * 2)
    assert _count(source.sample()) == 7


def test_restart_resumes_from_the_saved_offset(tmp_path):
    log, state = tmp_path / "inference.log", str(tmp_path / "tail.json")
    log.write_text(_line() * 3)
    first = LogTailSource(str(log), labels={"model": "m"}, state_file=state)
    _append(log, _line() * 2)
    assert _count(first.sample()) == 2
    first.close()
    _append(log, _line() * 4)  # written while the agent was down
    second = LogTailSource(str(log), labels={"model": "m"}, state_file=state)
    assert _count(second.sample()) == 4  # neither re-read nor skipped
    second.close()


def test_a_log_rotated_away_while_starting_is_read_from_the_next_round(tmp_path, monkeypatch):
    import builtins

    from collector.sources import logtail

    log = tmp_path / "inference.log"
    log.write_text(_line() * 2)
    calls = []

    def vanished_once(path, *args, **kwargs):  # gone between the stat and the open
        calls.append(path)
        if len(calls) == 1:
            raise FileNotFoundError(path)
        return builtins.open(path, *args, **kwargs)

    monkeypatch.setattr(logtail, "open", vanished_once, raising=False)
    source = LogTailSource(str(log), labels={"model": "m"})  # raised AttributeError before
    _append(log, _line())
    assert _count(source.sample()) == 3  # the file found next is read from its start
    source.close()
