"""The corpus batch's parts without Ray: input listing and order, the journal's guarantees
(one writer, torn last record, settings check), durable outputs, WAV duration, progress."""

import io
import json

import pytest

from ckw.corpus import inputs, journal, outputs, progress
from ckw.runtime import output_file


def touch(path, size):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\0" * size)
    return path


def test_directory_is_walked_for_audio_largest_first(tmp_path):
    touch(tmp_path / "a.wav", 10)
    touch(tmp_path / "a.flac", 30)
    touch(tmp_path / "sub" / "b.MP3", 20)
    touch(tmp_path / "notes.txt", 99)
    touch(tmp_path / ".hidden.wav", 99)
    files = inputs.list_inputs(str(tmp_path))
    assert [f.relpath for f in files] == ["a.flac", "sub/b.MP3", "a.wav"]
    assert [f.size for f in files] == [30, 20, 10]
    assert all(f.path.startswith(str(tmp_path)) for f in files)


def test_list_file_paths_are_relative_to_the_list(tmp_path):
    touch(tmp_path / "audio" / "x.wav", 5)
    outside = touch(tmp_path.parent / f"{tmp_path.name}-elsewhere" / "y.wav", 7)
    listing = tmp_path / "batch.txt"
    listing.write_text(f"# today\naudio/x.wav\n\n{outside}\naudio/x.wav\n", encoding="utf-8")
    files = inputs.list_inputs(str(listing))
    assert [(f.relpath, f.size) for f in files] == [(str(outside).lstrip("/"), 7), ("audio/x.wav", 5)]


@pytest.mark.parametrize(
    "make,message",
    [
        (lambda d: d / "missing", "no such folder or list file"),
        (lambda d: d, "no audio files"),
        (lambda d: touch(d / "l.txt", 0), "the list names no files"),
    ],
)
def test_input_errors_name_the_flag(tmp_path, make, message):
    with pytest.raises(inputs.InputError, match=message) as e:
        inputs.list_inputs(str(make(tmp_path)))
    assert str(e.value).startswith("--input=")


def test_list_entry_that_does_not_exist_names_its_line(tmp_path):
    listing = tmp_path / "l.txt"
    listing.write_text("gone.wav\n", encoding="utf-8")
    with pytest.raises(inputs.InputError, match=r"l.txt:1: gone.wav: no such file"):
        inputs.list_inputs(str(listing))


BATCH = {"model": "tiny", "output_format": "txt", "options": {"temperature": (0.0, 0.2)}}


def test_journal_resumes_only_what_is_not_done(tmp_path):
    book = journal.Journal(str(tmp_path), BATCH)
    book.append({"file": "/a", "status": "started"}, durable=False)
    book.append({"file": "/a", "status": "done"})
    book.append({"file": "/b", "status": "failed", "error": "bad"})
    book.append({"file": "/c", "status": "worker_died"})
    book.append({"file": "/d", "status": "started"})
    book.close()
    again = journal.Journal(str(tmp_path), BATCH)  # tuples and lists compare equal after JSON
    assert again.finished() == {"/a"}
    assert again.status == {"/a": "done", "/b": "failed", "/c": "worker_died", "/d": "started"}
    again.close()


def test_journal_cuts_a_torn_last_record(tmp_path, capsys):
    book = journal.Journal(str(tmp_path), BATCH)
    book.append({"file": "/a", "status": "done"})
    book.close()
    path = tmp_path / journal.JOURNAL_NAME
    with open(path, "ab") as f:
        f.write(b'{"file": "/b", "sta')
    again = journal.Journal(str(tmp_path), BATCH)
    again.append({"file": "/b", "status": "done"})
    again.close()
    assert "dropped an unfinished last record" in capsys.readouterr().err
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [json.loads(line).get("file") for line in lines] == [None, "/a", "/b"]


def test_journal_has_one_writer(tmp_path):
    book = journal.Journal(str(tmp_path), BATCH)
    with pytest.raises(journal.JournalError, match="another transcribe_corpus is writing"):
        journal.Journal(str(tmp_path), BATCH)
    book.close()
    journal.Journal(str(tmp_path), BATCH).close()


def test_journal_refuses_other_settings_and_damage(tmp_path):
    journal.Journal(str(tmp_path), dict(BATCH, model="base")).close()
    journal.Journal(str(tmp_path), BATCH).close()  # no file started under "base": the settings may change
    book = journal.Journal(str(tmp_path), BATCH)
    book.append({"file": "/a", "status": "started"})
    book.close()
    with pytest.raises(journal.JournalError, match=r'output_format: "txt" then, "srt" now'):
        journal.Journal(str(tmp_path), dict(BATCH, output_format="srt"))
    with open(tmp_path / journal.JOURNAL_NAME, "ab") as f:
        f.write(b"not json\n")
    with pytest.raises(journal.JournalError, match=r"journal.jsonl:3: not a JSON record"):
        journal.Journal(str(tmp_path), BATCH)
    other = tmp_path / "other"
    other.mkdir()
    (other / journal.JOURNAL_NAME).write_text('{"someone": "else"}\n', encoding="utf-8")
    with pytest.raises(journal.JournalError, match="not a transcribe_corpus journal"):
        journal.Journal(str(other), BATCH)
    assert (other / journal.JOURNAL_NAME).read_text(encoding="utf-8") == '{"someone": "else"}\n'


def test_outputs_are_written_whole(tmp_path):
    output_file.write_file(str(tmp_path / "deep/er/a.flac.txt"), "hello\n")
    output_file.write_file(str(tmp_path / "deep/er/a.flac.txt"), "again\n")
    assert (tmp_path / "deep/er/a.flac.txt").read_text(encoding="utf-8") == "again\n"
    assert sorted(p.name for p in (tmp_path / "deep/er").iterdir()) == ["a.flac.txt"]
    assert outputs.output_relpath("x/a.flac", "srt") == "x/a.flac.srt"


def test_progress_lines_and_summary():
    out = io.StringIO()
    meter = progress.Progress(total_files=3, total_bytes=400, every_seconds=0.0, out=out)
    meter.file_finished(300, audio_seconds=30.0)
    meter.file_finished(50, error="/x.wav: bad")
    meter.file_finished(50, audio_seconds=5.0)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("transcribe_corpus: 1/3 files, 0 failed, 0.01 h of audio, ")
    assert lines[-1].startswith("transcribe_corpus: 3/3 files, 1 failed, ") and lines[-1].endswith("ETA 0:00:00")
    summary = meter.summary(skipped=4, workers="2 workers x 1 thread (tiny)").splitlines()
    assert summary[0].startswith("transcribe_corpus: 2 transcribed, 1 failed, 4 finished before (skipped); 35.0 s of")
    assert summary[1:] == ["transcribe_corpus: failed: /x.wav: bad"]
