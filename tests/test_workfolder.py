"""Each job's work folder, running code there (`init --run-code`, `exec`), the time a job is
worth (`--job-minutes`), and the audit of the system's temp folder."""

import glob
import io
import json
import os
import re
import shutil
import tempfile
import unittest
from contextlib import redirect_stdout

import standin
from standin import BRACKET, run_cli
from arena import cli, outputs, workspace  # noqa: E402
from arena.jobs import job_kind  # noqa: E402
from arena.storage import Run  # noqa: E402
from arena.workspace import PHASE_MINUTES, parse_job_minutes  # noqa: E402
from arena.estimate import BENCH_TOKENS, BRIEF_TOKENS, RUN_CODE_TOKENS  # noqa: E402
from arena.base import ArenaError  # noqa: E402

TASK = "Write calc.py: evaluate + - * / on integers, as Python does.\n"
ENGINE = 'python3 -S "%s"' % os.path.abspath(BRACKET)


def read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def write(path, text):
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class Project(unittest.TestCase):
    def project(self, *init, env=None):
        tmp = tempfile.mkdtemp(prefix="arena-work-")
        self.addCleanup(shutil.rmtree, tmp, True)
        write(os.path.join(tmp, "task.md"), TASK)
        write(os.path.join(tmp, "old.md"), "eval(input())\n")
        run_cli(["init", "--agents", "4", "--seed", "5", "--task-file", "task.md", "--baseline-file", "old.md",
                 "--run", "t"] + list(init), tmp, env=env)
        return tmp

    def play(self, *init, run_code=False):
        cwd = self.project(*init)
        before = standin.tree(cwd)
        agent = standin.StandIn(cwd, seed=5, run_code=run_code)
        standin.Orchestrator(cwd, agent, "t", runner=standin.run_here).play()
        self.assertEqual(standin.tree(cwd), before)
        briefs = {os.path.basename(p)[:-3]: read(p) for p in glob.glob(os.path.join(cwd, ".arena", "t", "b", "*.md"))}
        self.assertEqual({job_kind(j) for j in briefs}, {"spawn", "atk", "def", "judge", "final", "merge"})
        return cwd, agent, briefs


class Briefs(Project):
    def test_every_brief_names_its_work_folder_and_time_and_forbids_running_code(self):
        cwd, agent, briefs = self.play()
        for job, text in briefs.items():
            folder = ".arena/t/work/%s/" % job
            self.assertIn("Your work folder is `%s`" % folder, text, job)
            self.assertTrue(os.path.isdir(os.path.join(cwd, folder)), job)
            self.assertIn("not in the system's temporary directory", text, job)
            self.assertIn("worth about %d minutes" % PHASE_MINUTES[job_kind(job)], text, job)
            self.assertIn("Running code is not permitted in this run", text, job)
            self.assertIn("do not retry it or look for a way around it", text, job)
            self.assertNotIn(" exec ", text, job)
            self.assertNotIn("{{", text, job)
            self.assertIn("files in your work folder", text, job)
        for job, text in briefs.items():
            if job_kind(job) == "atk":
                self.assertIn("attacks carry no reproducer", text)
        self.brief_sizes_as_estimated(cwd, briefs, {})

    def brief_sizes_as_estimated(self, cwd, briefs, extra):
        """The estimate's brief sizes are within 10% of the mean of these briefs, by kind."""
        task = read(os.path.join(cwd, ".arena", "t", "task.md"))
        sizes = {}
        for job, text in briefs.items():
            sizes.setdefault(job_kind(job), []).append((len(text) - len(task) * text.count(task)) / 4)
        for kind, got in sizes.items():
            mean, assumed = sum(got) / len(got), BRIEF_TOKENS[kind] + extra.get(kind, 0)
            self.assertLess(abs(assumed - mean), 0.1 * mean, "%s briefs are %d tokens, estimate.py assumes %d"
                            % (kind, mean, assumed))

    def test_run_code_briefs_give_the_one_command_and_the_minutes_asked_for(self):
        cwd, agent, briefs = self.play("--run-code", "--job-minutes", "spawn=20,judge=6", run_code=True)
        minutes = dict(PHASE_MINUTES, spawn=20, judge=6)
        for job, text in briefs.items():
            self.assertIn("`%s exec --run t --job %s <file> [arguments]`" % (ENGINE, job), text, job)
            self.assertIn("worth about %d minutes" % minutes[job_kind(job)], text, job)
            self.assertNotIn("Running code is not permitted", text, job)
            self.assertNotIn("{{", text, job)
        defence = [t for j, t in briefs.items() if job_kind(j) == "def"][0]
        self.assertIn("`.arena/t/work/<attack file name without .md>/`", defence)
        attack = [t for j, t in briefs.items() if job_kind(j) == "atk"][0]
        self.assertIn("Reproducer: <file name in your work folder>", attack)
        # every stand-in ran check.py in its own work folder, with the temp folder there too
        self.assertEqual(set(agent.code_runs), set(agent.calls))
        for job, (code, out) in agent.code_runs.items():
            self.assertEqual(code, 0, out)
            self.assertIn("checked in %s\ntemp inside: True\n[exit status 0 after" % job, out)
            self.assertTrue(os.path.isfile(os.path.join(cwd, ".arena", "t", "work", job, "check.py")))
        self.brief_sizes_as_estimated(cwd, briefs, RUN_CODE_TOKENS)

    def test_bench_briefs_add_the_bench_section_the_estimate_counts(self):
        cwd, agent, briefs = self.play("--run-code", "--bench", run_code=True)
        for job, text in briefs.items():
            self.assertEqual("## The bench" in text, job_kind(job) in ("atk", "def", "judge", "probe"), job)
            self.assertNotIn("{{", text, job)
        self.brief_sizes_as_estimated(cwd, briefs, {k: RUN_CODE_TOKENS[k] + BENCH_TOKENS[k] for k in RUN_CODE_TOKENS})

    def test_status_and_plan_say_whether_code_runs(self):
        cwd = self.project()
        _, out, _ = run_cli(["status", "--run", "t"], cwd)
        self.assertIn("running code: off", out)
        cwd = self.project("--run-code")
        _, out, _ = run_cli(["status", "--run", "t"], cwd)
        self.assertIn("running code: ON (--run-code)", out)
        _, out, _ = run_cli(["plan", "--agents", "8", "--run-code", "--job-minutes", "30"], cwd)
        self.assertIn("running code: ON", out)
        self.assertIn("time per job: spawn 30, attack 16, defend 16, judge 10, final 10, probe 16, merge 30 minutes", out)


class Exec(Project):
    def handed_out(self, *init):
        cwd = self.project(*init)
        run_cli(["next", "--run", "t", "--direct"], cwd)
        return cwd

    def exec_(self, cwd, *args):
        return run_cli(["exec", "--run", "t"] + list(args), cwd, check=False)

    def test_refused_without_run_code(self):
        cwd = self.handed_out()
        write(os.path.join(cwd, ".arena/t/work/spawn-a001/t.py"), "open('ran', 'w')\n")
        code, out, err = self.exec_(cwd, "--job", "spawn-a001", "t.py")
        self.assertEqual(code, 2)
        self.assertEqual(len(err.splitlines()), 1)
        self.assertIn("without --run-code", err)
        self.assertFalse(os.path.exists(os.path.join(cwd, ".arena/t/work/spawn-a001/ran")))

    def test_runs_a_script_in_the_jobs_folder_only(self):
        cwd = self.handed_out("--run-code")
        work = os.path.join(cwd, ".arena/t/work/spawn-a001")
        write(os.path.join(work, "t.py"), "import os, sys, tempfile\nprint(os.getcwd(), tempfile.gettempdir(), sys.argv[1:])\n"
                                          "sys.exit(3)\n")
        for name in ("t.py", ".arena/t/work/spawn-a001/t.py", os.path.join(work, "t.py")):
            code, out, err = self.exec_(cwd, "--job", "spawn-a001", name, "x", "--y")
            self.assertEqual(code, 0, err)
            real = os.path.realpath(work)
            self.assertIn("%s %s ['x', '--y']" % (real, os.path.join(real, "tmp")), out)
            self.assertIn("[exit status 3 after", out)
        # another job's folder, a way out, a link out, a missing file, a job not handed out
        write(os.path.join(cwd, "outside.py"), "open('ran', 'w')\n")
        os.symlink(os.path.join(cwd, "outside.py"), os.path.join(work, "link.py"))
        for job, name in (("spawn-a002", "../spawn-a001/t.py"), ("spawn-a001", "../../../../outside.py"),
                          ("spawn-a001", "link.py"), ("spawn-a001", "nope.py"), ("spawn-a001", "outside.py"),
                          ("r1-m1-judge", "t.py"), ("spawn-a001", "t\x01.py"), ("spawn-a001", "x" * 5000)):
            code, out, err = self.exec_(cwd, "--job", job, name)
            self.assertEqual(code, 2, (job, name, out))
            self.assertEqual(len(err.splitlines()), 1, err)
        self.assertFalse(os.path.exists(os.path.join(cwd, "ran")))
        self.assertFalse(glob.glob(os.path.join(cwd, ".arena", "t", "work", "*", "ran")))

    def test_a_job_no_longer_out_runs_nothing(self):
        cwd = self.handed_out("--run-code")
        run_dir = os.path.join(cwd, ".arena", "t")
        for path in glob.glob(os.path.join(run_dir, "b", "spawn-*.md")):
            job = os.path.basename(path)[:-3]
            write(os.path.join(run_dir, "out", job + ".md"), "<!-- arena job: %s -->\nanswer\n" % job)
        run_cli(["collect", "--run", "t"], cwd)
        write(os.path.join(run_dir, "work/spawn-a001/t.py"), "print('ran')\n")
        code, out, err = self.exec_(cwd, "--job", "spawn-a001", "t.py")
        self.assertEqual(code, 2)
        self.assertIn("not handed out now", err)

    def test_a_script_past_its_time_is_killed(self):
        cwd = self.handed_out("--run-code")
        write(os.path.join(cwd, ".arena/t/work/spawn-a001/slow.py"), "import time\nprint('started', flush=True)\n"
                                                                     "time.sleep(120)\n")
        code, out, err = self.exec_(cwd, "--job", "spawn-a001", "--timeout", "1", "slow.py")
        self.assertEqual(code, 0, err)
        self.assertIn("started\n[timed out after 1 s and killed", out)
        for bad in ("0", "601"):
            code, out, err = self.exec_(cwd, "--job", "spawn-a001", "--timeout", bad, "slow.py")
            self.assertEqual(code, 2)


class JobMinutes(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_job_minutes(None), PHASE_MINUTES)
        self.assertEqual(parse_job_minutes("30"), {"spawn": 30, "atk": 16, "def": 16, "judge": 10, "final": 10,
                                                   "probe": 16, "merge": 30})
        self.assertEqual(parse_job_minutes("1"), {"spawn": 1, "atk": 1, "def": 1, "judge": 1, "final": 1, "probe": 1,
                                                  "merge": 1})
        self.assertEqual(parse_job_minutes("attack=3, judge=9"), dict(PHASE_MINUTES, atk=3, judge=9))
        for bad in ("0", "601", "spawn=0", "lunch=5", "abc", "spawn=5,", "-3", "spawn=x"):
            with self.assertRaises(ArenaError, msg=bad):
                parse_job_minutes(bad)

    def test_bad_value_is_one_line_and_exit_2(self):
        tmp = tempfile.mkdtemp(prefix="arena-work-")
        self.addCleanup(shutil.rmtree, tmp, True)
        write(os.path.join(tmp, "task.md"), TASK)
        code, out, err = run_cli(["init", "--agents", "4", "--task-file", "task.md", "--job-minutes", "lunch=5"], tmp,
                                 check=False)
        self.assertEqual(code, 2)
        self.assertEqual(len(err.splitlines()), 1)
        self.assertFalse(os.path.exists(os.path.join(tmp, ".arena")))

    def test_status_names_stragglers(self):
        st = {"minutes": dict(PHASE_MINUTES), "jobs": {
            "spawn-a001": {"s": "issued", "at": 1000.0}, "spawn-a002": {"s": "issued", "at": 1000.0 + 50 * 60},
            "r1-m1-judge": {"s": "issued", "at": 1000.0 + 52 * 60}, "spawn-a003": {"s": "done"}}}
        buf = io.StringIO()
        with redirect_stdout(buf):
            cli.print_handed_out(st, 1000.0 + 60 * 60)
        self.assertEqual(buf.getvalue().splitlines(), [
            "time per job: spawn 15, attack 8, defend 8, judge 5, final 5, probe 8, merge 15 minutes; handed out now: 3",
            "  spawn-a001: 60 min since handed out, over its 15",
            "  spawn-a002: 10 min since handed out",
            "  r1-m1-judge: 8 min since handed out, over its 5"])

    def test_status_shows_time_since_handed_out(self):
        cwd = Project.project(self)
        run_cli(["next", "--run", "t", "--direct"], cwd)
        _, out, _ = run_cli(["status", "--run", "t"], cwd)
        self.assertIn("handed out now: 4", out)
        self.assertRegex(out, r"\n  spawn-a00\d: 0 min since handed out\n")


class TempAudit(Project):
    def test_new_entries_in_the_temp_folder_are_named(self):
        private = tempfile.mkdtemp(prefix="arena-tmpdir-")
        self.addCleanup(shutil.rmtree, private, True)
        write(os.path.join(private, "old.txt"), "there before\n")
        env = dict(os.environ, TMPDIR=private)
        cwd = self.project(env=env)
        _, out, _ = run_cli(["status", "--run", "t"], cwd, env=env)
        self.assertIn("system temp folder %s: no new entries of yours since init" % private, out)
        os.makedirs(os.path.join(private, "fuzz-scratch"))
        write(os.path.join(private, "old.txt"), "changed inside\n")
        _, out, _ = run_cli(["status", "--run", "t"], cwd, env=env)
        self.assertIn("system temp folder %s: 1 new entries of yours since init" % private, out)
        self.assertIn("fuzz-scratch", out)
        os.remove(os.path.join(cwd, ".arena", "t", "tempdir.json"))
        _, out, _ = run_cli(["status", "--run", "t"], cwd, env=env)
        self.assertIn("system temp folder: UNKNOWN (its record tempdir.json was removed or made unreadable after "
                      "init, so it cannot vouch for what changed since", out)



def state_of(cwd):
    return Run("t", os.path.join(cwd, ".arena")).load()


class Evidence(Project):
    def play_evidence(self, how=None):
        cwd = self.project("--run-code")
        always = {}
        if how:
            st = state_of(cwd)
            for m in st["rounds"][0]["matches"]:
                for side in (m["a"], m["b"]):
                    always["%s-atk-%s" % (m["id"], side)] = how
        agent = standin.StandIn(cwd, seed=5, run_code=True, checks=False, always=always)
        standin.Orchestrator(cwd, agent, "t", runner=standin.run_here).play()
        return cwd, agent, state_of(cwd)

    def test_judges_rerun_reproducers_copied_without_agent_ids(self):
        cwd, agent, st = self.play_evidence()
        carried = {j: s["rp"] for j, s in st["summ"].items() if job_kind(j) == "atk" and s.get("rp")}
        self.assertTrue(carried, "no attack carried a reproducer")
        for atk, rp in carried.items():
            self.assertEqual(rp, {"1": "repro1.py"})
            mid = "-".join(atk.split("-")[:2])
            judge = mid + "-judge"
            brief = read(os.path.join(cwd, ".arena", "t", "b", judge + ".md"))
            self.assertIn("## Reproducers", brief)
            copies = re.findall(r"^- attack 1 against ([A-Z][a-z]+): `(\.arena/t/work/%s/against-\1-1\.py)`$"
                                % judge, brief, re.M)
            self.assertTrue(copies, brief)
            for label, path in copies:
                self.assertEqual(read(os.path.join(cwd, path)), "print('failure shown on input 1')\n")
                blinded = read(os.path.join(cwd, ".arena", "t", "j", judge, label + "-attacks.md"))
                self.assertIn("\nReproducer: %s (a copy in your work folder)\nOutput:\n" % path, blinded)
            self.assertNotRegex(brief, r"\ba\d{3}\b")
            self.assertIn('"reproduced": {"', brief)
        self.assertTrue(agent.reproduced)
        for judge, found in agent.reproduced.items():
            self.assertEqual({r for by in found.values() for r in by.values()}, {"yes"}, judge)
            sides = st["summ"][judge]["rep"]
            self.assertTrue(set(sides) <= set(st["cards"]), "rep is keyed by agent ids in the state")
        _, out, _ = run_cli(["winner", "--run", "t"], cwd)
        champ = st["champion"]
        expected = 0
        for m, res in cli.path_of(st, champ):
            if st["summ"].get("%s-atk-%s" % (m["id"], cli.opponent(m, champ)), {}).get("rp"):
                expected += 1
        self.assertEqual(out.count("; reproducer: reproduced by the judge"), expected, out)
        run_cli(["report", "--run", "t"], cwd)
        if expected:
            self.assertIn("reproducer: reproduced by the judge", read(os.path.join(cwd, ".arena", "t", "report.html")))

    def test_an_output_that_does_not_reproduce_is_recorded(self):
        cwd, agent, st = self.play_evidence("fake-output")
        round1 = [m["id"] for m in st["rounds"][0]["matches"]]
        said = {j: f for j, f in agent.reproduced.items() if "-".join(j.split("-")[:2]) in round1}
        self.assertTrue(said)
        for judge, found in said.items():
            self.assertEqual({r for by in found.values() for r in by.values()}, {"no"}, judge)
        mid = round1[0]
        for side in (st["rounds"][0]["matches"][0]["a"], st["rounds"][0]["matches"][0]["b"]):
            atk = "%s-atk-%s" % (mid, cli.opponent(st["rounds"][0]["matches"][0], side))
            if st["summ"].get(atk, {}).get("rp"):
                self.assertEqual(cli.reproducer_note(st, mid, side, 1), "reproducer: did not reproduce")

    def test_a_reproducer_not_in_the_work_folder_is_refused_and_retried(self):
        cwd = self.project("--run-code")
        st = state_of(cwd)
        m = st["rounds"][0]["matches"][0]
        atk = "%s-atk-%s" % (m["id"], m["a"])
        agent = standin.StandIn(cwd, seed=5, run_code=True, checks=False, misbehave={atk: "bad-reproducer"})
        standin.Orchestrator(cwd, agent, "t", runner=standin.run_here).play()
        journal = read(os.path.join(cwd, ".arena", "t", "journal.jsonl"))
        fails = [line for line in journal.splitlines() if '"fail"' in line and atk in line]
        self.assertEqual(agent.calls.count(atk), 2)
        self.assertEqual(len(fails), 1)
        self.assertIn("names reproducer 'missing.py', which is not a file in your work folder", fails[0])

    def test_a_verdict_with_a_bad_reproduced_field_is_refused_and_retried(self):
        cwd = self.project("--run-code")
        judge = state_of(cwd)["rounds"][0]["matches"][0]["id"] + "-judge"
        agent = standin.StandIn(cwd, seed=5, run_code=True, checks=False, misbehave={judge: "bad-reproduced"})
        standin.Orchestrator(cwd, agent, "t", runner=standin.run_here).play()
        self.assertEqual(agent.calls.count(judge), 2)
        journal = read(os.path.join(cwd, ".arena", "t", "journal.jsonl"))
        fails = [line for line in journal.splitlines() if '"fail"' in line and judge in line]
        self.assertEqual(len(fails), 1)
        self.assertIn("'reproduced' gives attack 9", fails[0])

    def test_without_run_code_reproducer_lines_are_plain_text(self):
        cwd, agent, briefs = self.play()
        st = state_of(cwd)
        self.assertFalse([j for j, s in st["summ"].items() if s.get("rp")])
        self.assertFalse([t for j, t in briefs.items() if "## Reproducers" in t])


class FindReproducers(unittest.TestCase):
    def setUp(self):
        self.top = tempfile.mkdtemp(prefix="arena-repro-")
        self.addCleanup(shutil.rmtree, self.top, True)
        self.folder = os.path.join(self.top, "work", "r1-m1-atk-a001")
        write(os.path.join(self.folder, "r.py"), "print(1)\n")
        write(os.path.join(self.folder, "big.py"), "#" * (workspace.MAX_REPRODUCER_BYTES + 1))
        write(os.path.join(self.top, "out.py"), "print(1)\n")

    def find(self, *bodies):
        text = "".join("## ATTACK %d MAJOR: x\nbroken\n%s" % (k, b) for k, b in enumerate(bodies, 1))
        return workspace.find_reproducers(text, self.folder, "a.md")

    def test_accepted(self):
        out = "Output:\n~~~\n1\n~~~\n"
        self.assertEqual(self.find("", "Reproducer: r.py\n" + out, "Reproducer: `%s`\n%s" % (
            os.path.join(self.folder, "r.py"), out), "Reproducer: none\n"), {"2": "r.py", "3": "r.py"})

    def test_refused(self):
        out = "Output:\n~~~\n1\n~~~\n"
        for body in ("Reproducer: r.py\nReproducer: r.py\n" + out, "Reproducer: r.py\n", "Output:\nReproducer: r.py\n",
                     "Reproducer: nope.py\n" + out, "Reproducer: ../../out.py\n" + out, "Reproducer: big.py\n" + out,
                     "Reproducer:\n" + out):
            with self.assertRaises(ValueError, msg=body):
                self.find(body)


class VerdictReproduced(unittest.TestCase):
    def check(self, reproduced):
        return workspace.check_reproduced(reproduced, ["Kestrel", "Heron"], {"Kestrel": ["2"]}, "v.json")

    def test_valid(self):
        self.assertEqual(self.check({"Kestrel": {"2": "fixed"}}), {"Kestrel": {"2": "fixed"}})
        self.assertEqual(self.check({}), {})

    def test_invalid(self):
        for bad in ([], {"Robin": {"2": "yes"}}, {"Kestrel": {"1": "yes"}}, {"Heron": {"2": "yes"}},
                    {"Kestrel": {"2": "maybe"}}, {"Kestrel": ["2"]}, {"Kestrel": {"2": True}}):
            with self.assertRaises(ValueError, msg=repr(bad)):
                self.check(bad)

    def test_parse_verdict_hands_it_on(self):
        self.assertEqual(outputs.parse_verdict(json.dumps({
            "job": "final", "scores": {"Kestrel": {"c": 1}, "Heron": {"c": 2}},
            "fatal": {"Kestrel": False, "Heron": False}, "reproduced": {"Kestrel": {"1": "yes"}}}),
            "final", ["Kestrel", "Heron"], [("c", 5, "")], "v.json")["reproduced"], {"Kestrel": {"1": "yes"}})


if __name__ == "__main__":
    unittest.main()
