"""Tests of bench/task_spec.py: run as `python3 bench/task_spec_test.py` (ctest runs it)."""

import math
import sys
import unittest
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import task_spec  # noqa: E402
from task_spec import TaskError, evaluate  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def task_files():
    return sorted(ROOT.glob("suite/*/task.yaml")) + sorted(ROOT.glob("*/suite/*/task.yaml")) + \
        sorted(ROOT.glob("evaluators/*/suite/*/task.yaml"))


class ExpressionTest(unittest.TestCase):
    def test_grammar_as_the_engine_reads_it(self):
        names = {"M": 4.0, "N": 6.0, "eps": 0.5}
        self.assertEqual(evaluate("2*M*N + 1", names), 49)
        self.assertEqual(evaluate("4*(M + N)", names), 40)
        self.assertEqual(evaluate("-2^2", names), -4)  # unary minus binds looser than ^
        self.assertEqual(evaluate("2^3^2", names), 512)  # ^ is right-associative
        self.assertEqual(evaluate("7 % 4 / 2", names), 1.5)
        self.assertEqual(evaluate("max(M, N) * min(M, 1) + ceil(eps) + floor(eps)", names), 7)
        self.assertEqual(evaluate("sqrt(16) + log2(8)", names), 7)
        self.assertEqual(evaluate("1.5e2 + .5", names), 150.5)
        self.assertEqual(evaluate(12, names), 12)

    def test_errors_name_what_is_wrong(self):
        for text, words in [("M +", "ended"), ("M * (N", "')'"), ("K", "unknown name 'K'"), ("M / 0", "division"),
                            ("pow(M, 2)", "unknown function"), ("min(M)", "takes 2"), ("M N", "unexpected 'N'"),
                            ("(" * 200 + "1" + ")" * 200, "nested"), ("__import__('os')", "unknown function")]:
            with self.assertRaises(TaskError) as caught:
                evaluate(text, {"M": 1.0, "N": 2.0})
            self.assertIn(words, str(caught.exception), text)


class YamlSubsetTest(unittest.TestCase):
    def test_reads_every_task_as_pyyaml_does(self):
        try:
            import yaml
        except ImportError:
            self.skipTest("PyYAML is not installed: nothing to compare with")
        files = task_files()
        self.assertGreater(len(files), 10)
        for path in files:
            with self.subTest(task=str(path.relative_to(ROOT))):
                text = path.read_text()
                self.assertEqual(task_spec.read_yaml_subset(text, str(path)), yaml.safe_load(text))

    def test_refuses_what_it_does_not_read(self):
        for text in ["a: |\n  text\n", "a: &x 1\n", "a: 1\n  b: 2\n", "a: {b: 1\n", "a: 1\na: 2\n", "- 1\nb: 2\n"]:
            with self.assertRaises(TaskError, msg=text):
                task_spec.read_yaml_subset(text)

    def test_structures(self):
        text = "# top\nname: x  # trailing\nlist:\n- {a: [1, 2.5, 'q # r'], b: ~}\n-  c: yes it is\n   d: 3\n"
        self.assertEqual(task_spec.read_yaml_subset(text),
                         {"name": "x", "list": [{"a": [1, 2.5, "q # r"], "b": None}, {"c": "yes it is", "d": 3}]})


class BindTest(unittest.TestCase):
    def test_every_suite_task_binds_on_both_shapes_with_either_reader(self):
        for path in sorted(ROOT.glob("suite/*/task.yaml")):
            for shape in ("test", "bench") + (("gpu",) if (path.parent / "baseline.cu").is_file() else ()):
                with self.subTest(task=path.parent.name, shape=shape):
                    task = task_spec.load_task(path.parent, shape)
                    self.assertEqual(task, task_spec.load_task(path.parent, shape, prefer_pyyaml=False))
                    self.assertTrue(all(d >= 1 for t in task.inputs + task.outputs for d in t.dims))
                    self.assertGreater(task.roofline["min_bytes"], 0)

    def test_paged_decode(self):
        task = task_spec.load_task(ROOT / "suite/gqa_paged_decode_h32_kv4_d128_ps1", "bench")
        by_name = {t.name: t for t in task.inputs}
        self.assertEqual(by_name["k_cache"].dims, [65536, 1, 4, 128])
        self.assertEqual(by_name["k_cache"].dtype, "bf16")
        self.assertEqual(by_name["sm_scale"].dims, [])
        self.assertEqual(by_name["sm_scale"].elements, 1)
        self.assertEqual(by_name["kv_indptr"].dist, {"kind": "indptr", "total": 65536, "least": 1, "spread": 0.9})
        self.assertEqual(by_name["kv_indices"].dist, {"kind": "pages", "pages": 65536})
        self.assertEqual(task.fib_definition, "gqa_paged_decode_h32_kv4_d128_ps1")
        prefill = task_spec.load_task(ROOT / "suite/gqa_paged_prefill_causal_h32_kv8_d128_ps1", "bench")
        self.assertEqual({t.name: t for t in prefill.inputs}["qo_indptr"].dist["least"], 256)

    def test_shape_header_as_the_engine_writes_it(self):
        task = task_spec.load_task(ROOT / "suite/matmul", "bench")
        self.assertIn("constexpr long K = 5120;\nconstexpr long M = 32;\nconstexpr long N = 384;\n", task.shape_header())
        adamw = task_spec.load_task(ROOT / "suite/adamw", "test")
        self.assertIn("constexpr double beta1 = 0.90000000000000002;", adamw.shape_header())
        self.assertEqual(task.roofline["flops_mm"], 2 * 32 * 384 * 5120)

    def test_errors_name_the_file(self):
        with self.assertRaises(TaskError) as caught:
            task_spec.load_task(ROOT / "suite/matmul", "huge")
        self.assertIn("no shape 'huge'", str(caught.exception))
        self.assertIn("task.yaml", str(caught.exception))
        with self.assertRaises(TaskError):
            task_spec.load_task(ROOT / "suite/no_such_task")
        self.assertTrue(math.isclose(evaluate("sqrt(2)", {}), math.sqrt(2)))


if __name__ == "__main__":
    unittest.main()
