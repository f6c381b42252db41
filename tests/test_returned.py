"""What clients report, and when: an output is collected only once its agent has returned.

A client told of each completion names the jobs that returned (`next --returned`); the others
are still being written and are not read. A collected file that its agent changes afterwards is
noticed before another job reads it: read again, and kept only if it still counts as before,
else the text collected is put back. `check` on a collected job compares its file with that text.
"""

import os
import unittest

from standin import init_run, run_cli, state_of


def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


class Returned(unittest.TestCase):
    def setUp(self):
        self.cwd = init_run(self, 2, 4, "--direct", "--recheck", "off", "--merge", "off", run="t")
        self.run_dir = os.path.join(self.cwd, ".arena", "t")
        out = self.next()
        self.assertIn("Wave 1", out)

    def next(self, *extra, code=0):
        got, out, err = run_cli(["next", "--run", "t"] + list(extra), self.cwd, check=False)
        self.assertEqual(got, code, err)
        return out

    def solution(self, agent, text):
        write(os.path.join(self.run_dir, "out", "spawn-%s.md" % agent),
              "<!-- arena job: spawn-%s -->\n%s\n" % (agent, text))

    def status(self, job):
        return state_of(self.cwd, "t")["jobs"][job]["s"]

    def test_only_the_jobs_named_as_returned_are_collected(self):
        self.solution("a001", "first answer")
        self.solution("a002", "half written, its agent is still at work")
        self.next("--returned", "spawn-a001")
        self.assertEqual(self.status("spawn-a001"), "done")
        self.assertEqual(self.status("spawn-a002"), "issued", "read before its agent returned")
        # the agent of a002 finishes its file, then returns
        self.solution("a002", "second answer, finished")
        out = self.next("--returned", "spawn-a002")
        self.assertEqual(self.status("spawn-a002"), "done")
        kept = read(os.path.join(self.run_dir, "kept", "out", "spawn-a002.md"))
        self.assertIn("finished", kept)
        self.assertIn("r1-m01-atk", out)

    def test_a_file_rewritten_after_collection_and_still_valid_is_read_again(self):
        self.solution("a001", "first answer")
        self.next("--returned", "spawn-a001")
        self.solution("a001", "first answer, and one line its agent added after it was collected")
        self.solution("a002", "second answer")
        out = self.next("--returned", "spawn-a002")
        self.assertRegex(out, r"(?m)^changed, spawn-a001: .*spawn-a001\.md changed after it was collected; read again")
        kept = read(os.path.join(self.run_dir, "kept", "out", "spawn-a001.md"))
        self.assertIn("added after", kept)
        code, text, _ = run_cli(["check", "--run", "t", "--job", "spawn-a001"], self.cwd, check=False)
        self.assertEqual(code, 0)
        self.assertIn("still the text the engine read", text)

    def test_a_file_broken_after_collection_is_put_back(self):
        self.solution("a001", "first answer")
        self.next("--returned", "spawn-a001")
        path = os.path.join(self.run_dir, "out", "spawn-a001.md")
        write(path, "no header any more\n")
        code, text, _ = run_cli(["check", "--run", "t", "--job", "spawn-a001"], self.cwd, check=False)
        self.assertEqual(code, 1)
        self.assertIn("changed", text)
        self.assertIn("refused", text)
        self.solution("a002", "second answer")
        out = self.next("--returned", "spawn-a002")
        self.assertRegex(out, r"(?m)^changed, spawn-a001: .* the text collected was put back")
        self.assertIn("first answer", read(path))
        # the attack brief that reads it names the file as it was collected
        self.assertIn("r1-m01-atk-a002", out)

    def test_check_on_a_collected_job_says_it_is_unchanged(self):
        self.solution("a001", "first answer")
        self.next("--returned", "spawn-a001")
        code, text, _ = run_cli(["check", "--run", "t", "--job", "spawn-a001"], self.cwd, check=False)
        self.assertEqual(code, 0)
        self.assertIn("ok: job spawn-a001 was collected", text)

    def test_returned_given_twice_collects_every_job_it_names(self):
        self.solution("a001", "first answer")
        self.solution("a002", "second answer")
        self.next("--returned", "spawn-a001", "--returned", "spawn-a002")
        self.assertEqual(self.status("spawn-a001"), "done", "the first --returned was dropped")
        self.assertEqual(self.status("spawn-a002"), "done")

    def test_next_without_returned_collects_the_whole_wave(self):
        self.solution("a001", "first answer")
        self.solution("a002", "second answer")
        self.next()
        self.assertEqual(self.status("spawn-a001"), "done")
        self.assertEqual(self.status("spawn-a002"), "done")


if __name__ == "__main__":
    unittest.main()
