"""The spectrum read against the symptoms (ADR 0020): culprits ranked, test code never blamed, weak evidence said."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from pytest_mcp.domain.causes import LOCALIZE_FLOOR_TESTS, LOCALIZE_SAFETY, LOCALIZE_SAFETY_FLOOR, NameCauses
from pytest_mcp.domain.history import History, passed_key, since, updated
from pytest_mcp.domain.localization import (
    MODULE_CODE,
    CodeFunction,
    CodeState,
    Localization,
    Spectrum,
    Trace,
    changed_untested,
    code_key,
    is_test_code,
    own_function_key,
)
from pytest_mcp.domain.models import ReportedTest
from pytest_mcp.domain.requests import RequestPolicy
from pytest_mcp.domain.runs import LocalizeSpec, RunSpec

FUNCTIONS = (
    CodeFunction(file="shop/price.py", name="gross_price", first=1, last=2, digest="a", head="a", at_head=True),
    CodeFunction(file="shop/price.py", name="label", first=13, last=14, digest="b", head="b", at_head=True),
    CodeFunction(file="shop/price.py", name="net_price", first=5, last=6, digest="c", head="c", at_head=True),
    CodeFunction(file="tests/helpers.py", name="make_cart", first=1, last=9),
    CodeFunction(file="conftest.py", name="cart", first=1, last=3),
    CodeFunction(file="shop/util.py", name="setup_shop", first=1, last=9, digest="d", head="d", at_head=True),
)
GROSS, LABEL, NET, HELPER, FIXTURE, SETUP = range(6)


def trace(node_id: str, outcome: str, *functions: int) -> Trace:
    return Trace(node_id=node_id, outcome=outcome, functions=(SETUP, HELPER, FIXTURE, *functions))  # type: ignore[arg-type]


def shop_spectrum(**changes: object) -> Spectrum:
    functions = tuple(
        function.model_copy(update=changes.get(function.name, {}))  # type: ignore[arg-type]
        for function in FUNCTIONS
    )
    return Spectrum(
        functions=functions,
        tests=(
            *(trace(f"tests/test_m{i}.py::test_gross", "failed", GROSS) for i in range(20)),
            *(trace(f"tests/test_m{i}.py::test_label_gross", "failed", GROSS, LABEL) for i in range(20)),
            *(trace(f"tests/test_m{i}.py::test_label", "passed", LABEL) for i in range(20)),
            *(trace(f"tests/test_m{i}.py::test_net", "passed", NET) for i in range(20)),
        ),
        test_modules=tuple(f"tests/test_m{i}.py" for i in range(20)),
        recorder="sys.monitoring",
    )


GROUPS = {
    "gassert": [f"tests/test_m{i}.py::test_gross" for i in range(20)],
    "glabel": [f"tests/test_m{i}.py::test_label_gross" for i in range(20)],
}


def test_a_wrong_value_used_everywhere_is_the_top_culprit_of_every_symptom_and_merges_them() -> None:
    localization = Localization(shop_spectrum(), {})

    verdicts = localization.verdicts(GROUPS)

    for verdict in verdicts.values():
        top = localization.culprit(verdict.ranked[0])
        assert (top.file, top.function, top.lines) == ("shop/price.py", "gross_price", "1-2")
        # Its evidence over all the run's 40 failing tests, the same for every symptom it explains.
        assert (top.failing, top.failing_total, top.passing, top.passing_total) == (40, 40, 0, 40)
        assert top.score == 1.0
        assert verdict.merges
    culprit = localization.culprit(verdicts["glabel"].ranked[0])
    assert culprit.evidence() == "run by all 40 failing tests and 0 % of the 40 passing ones"


def test_test_code_and_conftest_files_are_never_blamed_though_every_failing_test_ran_them() -> None:
    localization = Localization(shop_spectrum(), {})

    ranked = localization.verdicts(GROUPS)["gassert"].ranked

    blamed = {FUNCTIONS[r.function].file for r in ranked}
    assert blamed == {"shop/price.py", "shop/util.py"}
    assert is_test_code("conftest.py", ())
    assert is_test_code("pkg/conftest.py", ())
    assert is_test_code("tests/helpers.py", ())
    assert is_test_code("check_shop.py", ("check_shop.py",))
    assert not is_test_code("src/pytest_mcp/testing/fixtures.py", ())


def test_a_function_every_test_runs_ranks_below_the_one_only_failing_tests_run() -> None:
    ranked = Localization(shop_spectrum(), {}).verdicts(GROUPS)["gassert"].ranked

    assert [FUNCTIONS[r.function].name for r in ranked] == ["gross_price", "setup_shop"]
    assert ranked[1].score < 0.6


def test_changed_code_the_failures_ran_comes_first_even_with_a_lower_score() -> None:
    changed = shop_spectrum(label={"digest": "b2"})

    localization = Localization(changed, {})
    top = localization.verdicts(GROUPS)["glabel"].ranked[0]

    assert FUNCTIONS[top.function].name == "label"
    assert localization.culprit(top).changed
    assert "changed since git's HEAD" in localization.culprit(top).evidence()
    # The last run's record wins over git's HEAD: a function that changed before it is not new now.
    assert not Localization(changed, {"shop/price.py::label": "b2"}).changed[LABEL]
    assert Localization(shop_spectrum(), {"shop/price.py::gross_price": "old"}).changed[GROSS]


def test_a_flat_spectrum_is_weak_evidence_and_names_no_culprit() -> None:
    functions = tuple(CodeFunction(file=f"pkg/m{i}.py", name=f"f{i}", first=1, last=2) for i in range(6))
    spectrum = Spectrum(
        functions=functions,
        tests=(
            Trace(node_id="tests/test_a.py::test_x", outcome="failed", functions=tuple(range(6))),
            Trace(node_id="tests/test_a.py::test_y", outcome="passed", functions=tuple(range(6))),
        ),
    )

    verdict = Localization(spectrum, {}).verdicts({"g1": ["tests/test_a.py::test_x"]})["g1"]

    assert not verdict.strong
    assert not verdict.merges


def test_two_bugs_where_one_buggy_function_calls_the_other_are_not_merged() -> None:
    # f1 is wrong; f2 is wrong too and calls f1. f2's failures tie f1 and f2: a top decided only by
    # how many other failures share f1 must not fold f2's bug into f1's.
    functions = (
        CodeFunction(file="pkg/a.py", name="f1", first=1, last=2),
        CodeFunction(file="pkg/a.py", name="f2", first=4, last=6),
    )
    spectrum = Spectrum(
        functions=functions,
        tests=(
            *(Trace(node_id=f"tests/test_a.py::test_f1[{i}]", outcome="failed", functions=(0,)) for i in range(5)),
            *(Trace(node_id=f"tests/test_a.py::test_f2[{i}]", outcome="failed", functions=(0, 1)) for i in range(3)),
        ),
    )
    groups = {
        "g1": [f"tests/test_a.py::test_f1[{i}]" for i in range(5)],
        "g2": [f"tests/test_a.py::test_f2[{i}]" for i in range(3)],
    }

    verdicts = Localization(spectrum, {}).verdicts(groups)

    assert verdicts["g1"].merges
    assert verdicts["g2"].strong
    assert not verdicts["g2"].merges


def test_a_failing_test_that_passes_when_repeated_is_flaky_and_out_of_the_spectrum() -> None:
    spectrum = shop_spectrum()
    flipped = tuple(
        t.model_copy(update={"outcome": "passed"}) if t.node_id == "tests/test_m0.py::test_gross" else t
        for t in spectrum.tests
    )

    verdict = Localization(spectrum.model_copy(update={"tests": flipped}), {}).verdicts(GROUPS)["gassert"]

    assert verdict.flaky == ("tests/test_m0.py::test_gross",)
    assert verdict.repeated == 19
    assert verdict.ranked[0].passing == 0  # a flaky test counts on neither side


def _failure(node_id: str) -> ReportedTest:
    return ReportedTest(node_id=node_id, outcome="failed", phase="call", message="assert 1 == 2")


def _passed(node_id: str) -> ReportedTest:
    return ReportedTest(node_id=node_id, outcome="passed", phase="call")


def test_each_failing_test_is_new_preexisting_or_flaky_against_the_history() -> None:
    history = History(failing={"t.py::old": "gsame", "t.py::moved": "gother"}, flaky=("t.py::wobbly",), last_run=1000.0)
    members = [_failure(n) for n in ("t.py::old", "t.py::moved", "t.py::new", "t.py::wobbly", "t.py::again")]
    signatures = {test.node_id: "gsame" for test in members}

    labels = since(members, signatures, history, flaky_now={"t.py::again"})

    assert labels is not None
    assert (labels.new, labels.preexisting, labels.flaky) == (2, 1, 2)
    assert labels.words() == "2 newly fail, 1 was already failing, 2 are flaky"
    single = since(members[2:3], signatures, History(last_run=1000.0), ())
    assert single is not None
    assert single.words() == "newly fails"


def test_a_test_that_passed_last_run_and_fails_now_with_nothing_it_runs_changed_is_suspect_flaky() -> None:
    members = [_failure(n) for n in ("t.py::steady", "t.py::edited", "t.py::unseen", "t.py::old")]
    history = History(
        failing={"t.py::old": "g"}, passed=tuple(map(passed_key, ("t.py::steady", "t.py::edited"))), last_run=1000.0
    )
    signatures = dict.fromkeys((test.node_id for test in members), "g")

    # `unchanged`: the failing tests whose recorded functions all read as the last run digested them.
    labels = since(members, signatures, history, (), unchanged={"t.py::steady", "t.py::unseen", "t.py::old"})

    assert labels is not None
    # steady: passed, nothing changed. edited: passed, but something it runs changed. unseen: never
    # seen passing. old: already failing the same way, which comes first.
    assert (labels.suspect_flaky, labels.new, labels.preexisting) == (1, 2, 1)
    assert (
        labels.words()
        == "2 newly fail, 1 was already failing, 1 is suspect flaky (passed last run; nothing it runs changed)"
    )
    first = since(members[:1], signatures, History(passed=history.passed), (), unchanged={"t.py::steady"})
    assert first is not None
    assert first.unknown == 1, "no earlier run: nothing is claimed"


def test_only_a_failing_test_whose_own_function_and_all_it_ran_an_earlier_run_digested_the_same_is_unchanged() -> None:
    spectrum = shop_spectrum()
    # The test functions themselves, which pytest calls (the recorders leave them out), are in the run's code.
    own = {
        f"tests/test_m{i}.py::{name}": f"t{i}{name}"
        for i in range(20)
        for name in ("test_gross", "test_label_gross", "test_label", "test_net")
    }
    functions = tuple(f.model_copy(update={"digest": f.digest or "t"}) for f in spectrum.functions)
    both = spectrum.model_copy(update={"functions": functions})
    last = {**{f.key: f.digest or "t" for f in functions}, **own}

    steady = Localization(both, last).unchanged(own)
    edited_test = Localization(both, {**last, "tests/test_m3.py::test_gross": "before"}).unchanged(own)
    edited_helper = Localization(both, {**last, "tests/helpers.py::make_cart": "before"}).unchanged(own)
    edited_label = Localization(both, {**last, "shop/price.py::label": "before"}).unchanged(own)

    assert len(steady) == 40
    assert steady["tests/test_m0.py::test_label_gross"] == 6, "5 functions it entered, and itself"
    assert "tests/test_m0.py::test_label" not in steady, "passing tests are not asked about"
    assert set(steady) - set(edited_test) == {"tests/test_m3.py::test_gross"}, "its own code was edited"
    assert edited_helper == {}, "every failing test runs the edited test helper"
    assert set(edited_label) == {f"tests/test_m{i}.py::test_gross" for i in range(20)}
    assert Localization(both, last).unchanged({}) == {}, "its own function not digested now: nothing is known"
    assert Localization(spectrum, last).unchanged(own) == {}, "test code not digested now: nothing is known"
    assert Localization(both, {}).unchanged(own) == {}, "no earlier run digested them"


def test_code_a_test_runs_without_entering_a_function_that_changed_leaves_no_test_unchanged() -> None:
    spectrum = shop_spectrum()
    own = {f"tests/test_m{i}.py::{name}": "t" for i in range(20) for name in ("test_gross", "test_label_gross")}
    modules = {code_key(file, MODULE_CODE): "m" for file in ("shop/price.py", "tests/test_m3.py", "tests/test_m4.py")}
    functions = tuple(f.model_copy(update={"digest": f.digest or "t"}) for f in spectrum.functions)
    both = spectrum.model_copy(update={"functions": functions})
    last = {**{f.key: f.digest or "t" for f in functions}, **own, **modules}
    now = {**last, "shop/cache.py::rate_of": "r"}

    steady = Localization(both, {**last, "shop/cache.py::rate_of": "r"}).unchanged(now, ["shop/cache.py::rate_of"])
    constant = Localization(both, {**last, "shop/price.py::<module>": "before"}).unchanged(now)
    cached = Localization(both, {**last, "shop/cache.py::rate_of": "before"}).unchanged(now, ["shop/cache.py::rate_of"])
    uncached = Localization(both, {**last, "shop/cache.py::rate_of": "before"}).unchanged(now)
    test_module = Localization(both, {**last, "tests/test_m3.py::<module>": "before"}).unchanged(now)
    unknown = Localization(both, {k: v for k, v in last.items() if not k.endswith("<module>")}).unchanged(now)

    assert len(steady) == 40
    assert constant == {}, "a project module's own code changed: any test may read it"
    assert cached == {}, "a cache may have answered any test from the changed function"
    assert len(uncached) == 40, "a changed function no test ran, and no cache hides: nothing it runs changed"
    assert set(steady) - set(test_module) == {"tests/test_m3.py::test_gross", "tests/test_m3.py::test_label_gross"}
    assert len(unknown) == 40, "no earlier run digested the modules' own code: nothing is compared"


def test_a_tests_own_function_is_found_by_its_node_id_the_last_definition_of_its_name() -> None:
    digests = {"t.py::TestA.test_x": "1", "t.py::test_y": "2", "t.py::test_y#2": "3"}

    assert own_function_key("t.py::TestA::test_x[1-2]", digests) == "t.py::TestA.test_x"
    assert own_function_key("t.py::test_y", digests) == "t.py::test_y#2"
    assert own_function_key("t.py::test_z", digests) is None
    assert own_function_key("pkg/mod.py::pkg.mod.func", digests) is None, "a doctest: no function of that name"


def test_the_history_remembers_the_tests_that_passed_until_they_fail() -> None:
    first = updated(History(), RunSpec(), {}, (), {}, passed=map(passed_key, ("t.py::a", "t.py::b")))
    second = updated(first, RunSpec(), {"t.py::a": "g"}, (), {}, passed=[passed_key("t.py::c")])

    assert set(first.passed) == {passed_key("t.py::a"), passed_key("t.py::b")}
    assert set(second.passed) == {passed_key("t.py::b"), passed_key("t.py::c")}, "a failing now is no longer passing"


def test_changed_test_code_is_not_listed_as_changed_code_no_test_entered() -> None:
    code = CodeState(
        digests={"shop/price.py::gross_price": "a2", "tests/test_x.py::test_new": "t2"},
        files=("shop/price.py", "tests/test_x.py"),
    )
    spectrum = Spectrum(in_run=True, test_modules=("tests/test_x.py",))
    last = {"shop/price.py::gross_price": "a", "tests/test_x.py::test_new": "t"}

    assert changed_untested(code, spectrum, last, code.files) == ("shop/price.py::gross_price",)


def test_the_first_run_of_a_project_claims_nothing_new_it_has_no_earlier_run() -> None:
    members = [_failure("t.py::a"), _failure("t.py::b")]

    labels = since(members, {"t.py::a": "g", "t.py::b": "g"}, History(), ())

    assert labels is not None
    assert (labels.new, labels.unknown) == (0, 2)
    assert labels.words() == "no earlier run"


def test_an_xpass_is_no_failure_and_has_no_label() -> None:
    xpass = ReportedTest(node_id="t.py::x", outcome="xpassed", phase="call", message="")

    assert since([xpass], {}, History(last_run=1000.0), ()) is None
    labels = since([xpass, _failure("t.py::a")], {"t.py::a": "g"}, History(last_run=1000.0), ())
    assert labels is not None
    assert labels.words() == "newly fails"


def test_the_history_forgets_what_a_run_ran_and_passed_and_keeps_what_it_did_not_run() -> None:
    history = History(failing={"a/test_x.py::t": "g1", "b/test_y.py::t": "g2"})

    after_full = updated(history, RunSpec(), {}, (), {})
    after_a = updated(history, RunSpec(node_ids=("a",)), {}, (), {})
    after_marked = updated(history, RunSpec(markers="slow"), {}, (), {})
    after_new = updated(history, RunSpec(), {"c/test_z.py::t": "g3"}, ("c/test_z.py::t",), {"m::f": "d"})

    assert after_full.failing == {}
    assert after_a.failing == {"b/test_y.py::t": "g2"}
    assert after_marked.failing == history.failing
    assert after_new.failing == {"c/test_z.py::t": "g3"}
    assert after_new.flaky == ("c/test_z.py::t",)
    assert after_new.digests == {"m::f": "d"}


def test_the_history_is_bounded_the_oldest_going_first() -> None:
    from pytest_mcp.domain import history as module

    many = {f"t.py::test_{i}": "g" for i in range(module.MAX_FAILING + 5)}

    kept = updated(History(), RunSpec(markers="x"), many, (), {})

    assert len(kept.failing) == module.MAX_FAILING
    assert "t.py::test_0" not in kept.failing
    assert f"t.py::test_{module.MAX_FAILING + 4}" in kept.failing


def test_the_recorder_follows_the_interpreter_as_the_plugin_chooses_it() -> None:
    from pytest_mcp.domain.environment import PythonInfo, recorder_for

    def python(version: str, implementation: str = "CPython") -> PythonInfo:
        return PythonInfo(executable="p", version=version, implementation=implementation, prefix="/", virtual_env=False)

    assert recorder_for(python("3.12.1")) == "sys.monitoring"
    assert recorder_for(python("3.13.0")) == "sys.monitoring"
    assert recorder_for(python("3.11.7")) == "sys.setprofile"
    assert recorder_for(python("3.9.18")) == "sys.setprofile"
    assert recorder_for(python("3.12.1", "PyPy")) == "sys.setprofile"


def test_without_git_only_a_digest_an_earlier_run_recorded_tells_a_change_never_the_files_time() -> None:
    spectrum = shop_spectrum()
    no_git = spectrum.model_copy(
        update={"functions": tuple(f.model_copy(update={"at_head": False, "head": None}) for f in spectrum.functions)}
    )
    recorded = {"shop/price.py::gross_price": "a", "shop/price.py::label": "b-before"}

    localization = Localization(no_git, recorded, ("shop/price.py",))

    assert localization.changed[LABEL], "its digest differs from the one the last run recorded"
    assert not localization.changed[GROSS], "the same file, edited elsewhere: this function is untouched"
    assert localization.changed[NET], "new in a file an earlier run read: new code"
    assert not Localization(no_git, {}).changed[LABEL], "no earlier run, no git: nothing is claimed"
    assert not Localization(no_git, recorded, ()).changed[NET], "a file no run read: nothing is claimed"


def test_with_git_a_function_no_run_recorded_is_compared_with_head_and_a_record_comes_first() -> None:
    at_head = shop_spectrum(label={"digest": "b2"})

    assert Localization(at_head, {}).changed[LABEL], "differs from HEAD, no run recorded it"
    assert not Localization(at_head, {"shop/price.py::label": "b2"}).changed[LABEL], "unchanged since a run saw it"


def test_two_definitions_of_one_name_are_told_apart_by_their_order() -> None:
    getter = CodeFunction(file="shop/item.py", name="Item.price", first=3, last=4, digest="g", head="g", at_head=True)
    setter = getter.model_copy(update={"first": 7, "last": 8, "ordinal": 2, "digest": "s2", "head": "s"})
    spectrum = Spectrum(functions=(getter, setter), test_modules=())

    localization = Localization(spectrum, {})

    assert (getter.key, setter.key) == ("shop/item.py::Item.price", "shop/item.py::Item.price#2")
    assert localization.changed == (False, True), "only the setter differs from HEAD"


def test_an_accessor_is_not_blamed_unless_it_changed() -> None:
    spectrum = shop_spectrum(label={"trivial": True})

    ranked = Localization(spectrum, {}).verdicts(GROUPS)["glabel"].ranked
    assert LABEL not in {r.function for r in ranked}

    changed = shop_spectrum(label={"trivial": True, "digest": "b2"})
    ranked = Localization(changed, {}).verdicts(GROUPS)["glabel"].ranked
    assert ranked[0].function == LABEL, "a changed accessor is the likeliest cause"


def test_a_runs_own_spectrum_counts_its_passing_tests_per_function_as_a_list_of_them_would() -> None:
    listed = shop_spectrum()
    passing = [t for t in listed.tests if t.outcome == "passed"]
    counts = {index: sum(index in t.functions for t in passing) for index in range(len(FUNCTIONS))}
    counted = listed.model_copy(
        update={
            "tests": tuple(t for t in listed.tests if t.outcome == "failed"),
            "passing_total": len(passing),
            "functions": tuple(f.model_copy(update={"passing": counts[i]}) for i, f in enumerate(FUNCTIONS)),
            "in_run": True,
        }
    )

    assert Localization(counted, {}).verdicts(GROUPS) == Localization(listed, {}).verdicts(GROUPS)


def test_a_changed_function_a_failing_test_ran_keeps_its_earlier_digest_until_its_tests_pass() -> None:
    spec = RunSpec()
    before = History(digests={"shop/price.py::label": "b"}, files=("shop/price.py",))

    failing = updated(
        before, spec, {}, (), {"shop/price.py::label": "b2"}, ("shop/price.py",), {"shop/price.py::label": "run"}
    )
    assert failing.digests["shop/price.py::label"] == "b", "the next run still reads it as changed"

    passing = updated(failing, spec, {}, (), {"shop/price.py::label": "b2"}, ("shop/price.py",))
    assert passing.digests["shop/price.py::label"] == "b2"


def test_a_second_pass_repeats_a_few_failures_of_each_symptom_in_turn() -> None:
    from pytest_mcp.domain.causes import REPEATED_AT_MOST, REPEATED_PER_SYMPTOM, repeated

    symptoms = {"big": [f"t.py::big[{i}]" for i in range(300)], "small": ["t.py::one", "t.py::two"]}

    chosen = repeated(symptoms)

    assert chosen[:4] == ("t.py::big[0]", "t.py::one", "t.py::big[1]", "t.py::two")
    assert len(chosen) == REPEATED_PER_SYMPTOM + 2
    many = {f"g{i}": [f"t.py::f{i}[{j}]" for j in range(20)] for i in range(30)}
    assert len(repeated(many)) == REPEATED_AT_MOST
    assert {node_id.split("[")[0] for node_id in repeated(many)} == {f"t.py::f{i}" for i in range(30)}


def _asking(policy: RequestPolicy) -> tuple[NameCauses, list[LocalizeSpec]]:
    """NameCauses over a runner that keeps each second pass it is asked for, and records nothing."""
    asked: list[LocalizeSpec] = []

    class Runner:
        async def localize(self, spec: LocalizeSpec) -> str:
            asked.append(spec)
            return "recorded nothing"

    return NameCauses(Runner(), policy), asked  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_the_second_pass_collects_the_failing_modules_in_the_order_the_run_reached_them(tmp_path: Path) -> None:
    # A src-layout project may import its package through the first module pytest collects (a doctest
    # module): the largest symptom's module first would fail to import it (humanize did).
    doctest = ReportedTest(node_id="src/pkg/mod.py::pkg.mod.f", outcome="failed", phase="call", message="x")
    many = [_failure(f"tests/test_a.py::test_t[{i}]") for i in range(5)]
    causes, asked = _asking(RequestPolicy(root=tmp_path))

    await causes(RunSpec(), 10.0, [doctest, *many], None)

    assert asked[0].modules == ("src/pkg/mod.py", "tests/test_a.py")
    assert asked[0].failing[0] == "tests/test_a.py::test_t[0]"  # the largest symptom's first, in turn


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("tests", "ratio", "others"),
    [
        (1000, 0.5, 500),  # a share of the run's number of tests
        (5, 0.5, LOCALIZE_FLOOR_TESTS),  # never fewer than the floor: half of 5 tests tell nothing apart
        (1001, 0.5, 501),
        (1000, 2.0, 2000),
    ],
)
async def test_the_second_pass_runs_a_count_of_other_tests_whatever_the_run_took(
    tmp_path: Path, tests: int, ratio: float, others: int
) -> None:
    """What the pass records is counted from the run's tests, not timed: a run slowed down by a busy
    machine asks the same pass (ADR 0020, issue 41's determinism)."""
    reports = [_failure("tests/test_a.py::test_t"), *(_passed(f"tests/test_a.py::test_{i}") for i in range(tests - 1))]
    asked: list[LocalizeSpec] = []
    for duration in (2.0, 20.0):
        causes, asking = _asking(RequestPolicy(root=tmp_path, localize=ratio))
        await causes(RunSpec(), duration, reports, None)
        asked += asking

    assert [spec.others for spec in asked] == [others, others]
    assert asked[0].model_copy(update={"seconds": 0.0}) == asked[1].model_copy(update={"seconds": 0.0})


@pytest.mark.anyio
async def test_the_second_passs_count_is_a_share_of_the_runs_tests_not_of_the_tests_listed(tmp_path: Path) -> None:
    """An answer lists passing tests only with `detail` all: the count is a share of the summary's total."""
    causes, asked = _asking(RequestPolicy(root=tmp_path))

    await causes(RunSpec(), 2.0, [_failure("tests/test_a.py::test_t")], None, total=1000)

    assert [spec.others for spec in asked] == [500]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("duration", "ratio", "cap", "seconds"),
    [
        (10.0, 0.5, 120.0, 20.0),  # LOCALIZE_SAFETY times the pass's share of the run's wall time
        (0.4, 0.5, 120.0, LOCALIZE_SAFETY_FLOOR),  # never less than starting pytest on a busy machine takes
        (0.4, 0.5, 5.0, 5.0),  # the cap still holds over the floor
        (1000.0, 0.5, 120.0, 120.0),
    ],
)
async def test_the_second_passs_safety_is_a_multiple_of_its_share_at_least_the_floor_at_most_the_cap(
    tmp_path: Path, duration: float, ratio: float, cap: float, seconds: float
) -> None:
    causes, asked = _asking(RequestPolicy(root=tmp_path, localize=ratio, localize_max_seconds=cap))

    await causes(RunSpec(), duration, [_failure("tests/test_a.py::test_t")], None)

    assert LOCALIZE_SAFETY == 4.0
    assert [spec.seconds for spec in asked] == [seconds]


def _helpers_spectrum(root_passing: int, helper_passing: int = 0) -> tuple[Spectrum, dict[str, list[str]]]:
    """Three symptoms, ten failures each: each runs a helper of its own (which `helper_passing` passing
    tests run too) and one shared function, which `root_passing` passing tests run too."""
    root = CodeFunction(file="lib/core.py", name="convert", first=1, last=9)
    helpers = tuple(CodeFunction(file=f"lib/h{i}.py", name="render", first=1, last=3) for i in range(3))
    tests = [
        Trace(node_id=f"tests/test_{i}.py::test_{n}", outcome="failed", functions=(0, i + 1))
        for i in range(3)
        for n in range(10)
    ]
    tests += [
        Trace(node_id=f"tests/test_ok.py::test_{n}", outcome="passed", functions=(0,)) for n in range(root_passing)
    ]
    tests += [
        Trace(node_id=f"tests/test_ok_{i}.py::test_{n}", outcome="passed", functions=(i + 1,))
        for i in range(3)
        for n in range(helper_passing)
    ]
    groups = {f"g{i}": [f"tests/test_{i}.py::test_{n}" for n in range(10)] for i in range(3)}
    return Spectrum(functions=(root, *helpers), tests=tuple(tests), recorder="sys.monitoring"), groups


def test_one_root_cause_under_many_symptoms_is_named_before_each_symptoms_local_helper() -> None:
    spectrum, groups = _helpers_spectrum(root_passing=5)

    verdicts = Localization(spectrum, {}).verdicts(groups)

    # For each symptom alone the helper scores 1.0 and the root 0.82; over the run's 30 failures, the
    # root 0.93 and each helper 0.58.
    assert {spectrum.functions[v.ranked[0].function].file for v in verdicts.values()} == {"lib/core.py"}
    assert [v.ranked[0].score for v in verdicts.values()] == [pytest.approx(30 / (30 * 35) ** 0.5)] * 3
    assert not any(v.merges for v in verdicts.values()), "a helper only its failures ran: named, not merged"


def test_the_run_wide_score_names_the_root_though_each_symptoms_helper_scores_higher_on_its_own() -> None:
    # The miss the held-out suites showed (humanize's _ngettext): 40 passing tests run the root, so on
    # each symptom alone it scores 0.45 against its helper's 0.91; over the run's 30 failures it scores
    # 0.65, each helper 0.53. A helper a passing test ran too is no rival: one cause, one entry.
    spectrum, groups = _helpers_spectrum(root_passing=40, helper_passing=2)

    localization = Localization(spectrum, {})
    verdicts = localization.verdicts(groups)

    assert [spectrum.functions[v.ranked[0].function].file for v in verdicts.values()] == ["lib/core.py"] * 3
    assert all(v.merges for v in verdicts.values())
    assert localization.culprit(verdicts["g0"].ranked[0]).evidence() == (
        "run by all 30 failing tests and 87 % of the 46 passing ones"
    )


def test_a_second_bug_is_found_in_the_failures_the_first_cause_does_not_explain() -> None:
    # Two bugs, in lib/a.py (20 failures) and lib/b.py (10): a shared function every test runs (passing
    # ones too) explains both as a whole, worse than each bug its own failures.
    functions = (
        CodeFunction(file="lib/a.py", name="a", first=1, last=3),
        CodeFunction(file="lib/b.py", name="b", first=1, last=3),
        CodeFunction(file="lib/main.py", name="run", first=1, last=9),
    )
    tests = [Trace(node_id=f"tests/test_a.py::test_{n}", outcome="failed", functions=(0, 2)) for n in range(20)]
    tests += [Trace(node_id=f"tests/test_b.py::test_{n}", outcome="failed", functions=(1, 2)) for n in range(10)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_{n}", outcome="passed", functions=(2,)) for n in range(30)]
    groups = {
        "ga": [f"tests/test_a.py::test_{n}" for n in range(20)],
        "gb": [f"tests/test_b.py::test_{n}" for n in range(10)],
    }

    verdicts = Localization(Spectrum(functions=functions, tests=tuple(tests)), {}).verdicts(groups)

    assert {group: functions[v.ranked[0].function].name for group, v in verdicts.items()} == {"ga": "a", "gb": "b"}
    assert [verdicts["ga"].order, verdicts["gb"].order] == [0, 1]
    assert [verdicts["ga"].merges, verdicts["gb"].merges] == [True, True], "each the one cause of its own failures"


def _crashes_in_one_place(helper_failing: int) -> tuple[Spectrum, dict[str, list[str]]]:
    """One symptom, 26 failures raised at one site in `keyword`, which every test runs (371 passing ones
    too, as a lexer's function would be); `align`, a helper of `helper_failing` of the failing tests and
    of 3 passing ones, scores higher on its own. sqlparse's miss in the held-out suites."""
    functions = (
        CodeFunction(file="lex/lexer.py", name="Lexer.keyword", first=1, last=9),
        CodeFunction(file="lex/filters.py", name="Align.__init__", first=1, last=5),
        CodeFunction(file="lex/lexer.py", name="tokenize", first=11, last=19),
    )
    tests = [
        Trace(
            node_id=f"tests/test_f.py::test_{n}",
            outcome="failed",
            functions=(0, 2, 1) if n < helper_failing else (0, 2),
        )
        for n in range(26)
    ]
    tests += [Trace(node_id=f"tests/test_ok.py::test_{n}", outcome="passed", functions=(0, 2)) for n in range(371)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_t{n}", outcome="passed", functions=(2,)) for n in range(92)]
    tests += [Trace(node_id=f"tests/test_al.py::test_{n}", outcome="passed", functions=(1,)) for n in range(3)]
    return Spectrum(functions=functions, tests=tuple(tests)), {"g": [f"tests/test_f.py::test_{n}" for n in range(26)]}


def test_a_cause_explains_a_symptom_whole_not_a_helper_of_a_few_of_its_members() -> None:
    spectrum, groups = _crashes_in_one_place(helper_failing=6)

    (verdict,) = Localization(spectrum, {}).verdicts(groups).values()

    # The helper scores 6 / sqrt(26 * 9) = 0.39 over the run; the lexer's function 26 / sqrt(26 * 397)
    # = 0.26, and tokenize, which 92 more passing tests run, 0.23.
    assert spectrum.functions[verdict.ranked[0].function].name == "Lexer.keyword"
    assert verdict.strong
    assert verdict.merges
    assert verdict.cause is not None
    assert verdict.cause.score == pytest.approx(26 / (26 * 397) ** 0.5)


def _width_everywhere(helper_passing: int, width_passing: int = 277) -> tuple[Spectrum, dict[str, list[str]]]:
    """Twelve symptoms of one cause, 6 failures each: `width`, which every failing test runs and
    `width_passing` passing ones too (277: it scores 0.45); each symptom has a layout helper of its own,
    which `helper_passing` passing tests run too. click's miss in the held-out suites."""
    functions = (
        CodeFunction(file="cli/compat.py", name="width", first=1, last=2),
        *(CodeFunction(file=f"cli/layout{i}.py", name="wrap", first=1, last=9) for i in range(12)),
    )
    tests = [
        Trace(node_id=f"tests/test_{i}.py::test_{n}", outcome="failed", functions=(0, i + 1))
        for i in range(12)
        for n in range(6)
    ]
    tests += [
        Trace(node_id=f"tests/test_ok.py::test_{n}", outcome="passed", functions=(0,)) for n in range(width_passing)
    ]
    tests += [
        Trace(node_id=f"tests/test_ok{i}.py::test_{n}", outcome="passed", functions=(i + 1,))
        for i in range(12)
        for n in range(helper_passing)
    ]
    groups = {f"g{i}": [f"tests/test_{i}.py::test_{n}" for n in range(6)] for i in range(12)}
    return Spectrum(functions=functions, tests=tuple(tests)), groups


def test_a_low_scoring_function_every_failure_ran_is_the_one_cause_when_it_is_clearly_ahead() -> None:
    spectrum, groups = _width_everywhere(helper_passing=2)

    verdicts = Localization(spectrum, {}).verdicts(groups)

    # width: 72 / sqrt(72 * 349) = 0.45, under STRONG; each helper over the run 6 / sqrt(72 * 8) = 0.25.
    assert {spectrum.functions[v.ranked[0].function].name for v in verdicts.values()} == {"width"}
    assert all(v.strong and v.merges for v in verdicts.values())


def test_a_function_every_failure_ran_is_not_named_on_a_low_score_when_a_symptoms_own_function_is_near() -> None:
    # Helpers no passing test runs, each 6 / sqrt(72 * 6) = 0.29 over the run, and width run by 400
    # passing tests, 72 / sqrt(72 * 472) = 0.39: not CLEARLY ahead. Twelve bugs, each in its own helper,
    # would look the same: width is not named as their one cause, and each symptom keeps its own helper.
    spectrum, groups = _width_everywhere(helper_passing=0, width_passing=400)

    verdicts = Localization(spectrum, {}).verdicts(groups)

    assert {spectrum.functions[v.ranked[0].function].name for v in verdicts.values()} == {"wrap"}
    assert {v.order for v in verdicts.values()} == {0}, "no cause of the run: each symptom is read alone"


def _offsets_in_two_formats(converter_passing: int) -> tuple[Spectrum, dict[str, list[str]]]:
    """isodate's miss in the third held-out set: a converter (`tz_format`) that all 5 failures ran, and
    `converter_passing` passing tests (30: 5 / sqrt(5 * 35) = 0.38); its two callers, each the one function
    of a symptom that no other failure ran: `time_format` 3 failures and 18 passing tests (0.29 over the
    run), `datetime_format` 2 and 12 (0.24)."""
    functions = (
        CodeFunction(file="iso/tz.py", name="tz_format", first=1, last=30),
        CodeFunction(file="iso/time.py", name="time_format", first=1, last=7),
        CodeFunction(file="iso/datetime.py", name="datetime_format", first=1, last=9),
    )
    tests = [Trace(node_id=f"tests/test_time.py::test_{n}", outcome="failed", functions=(0, 1)) for n in range(3)]
    tests += [Trace(node_id=f"tests/test_dt.py::test_{n}", outcome="failed", functions=(0, 2)) for n in range(2)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_t{n}", outcome="passed", functions=(0, 1)) for n in range(18)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_d{n}", outcome="passed", functions=(0, 2)) for n in range(12)]
    tests += [
        Trace(node_id=f"tests/test_ok.py::test_z{n}", outcome="passed", functions=(0,))
        for n in range(converter_passing - 30)
    ]
    groups = {
        "gtime": [f"tests/test_time.py::test_{n}" for n in range(3)],
        "gdt": [f"tests/test_dt.py::test_{n}" for n in range(2)],
    }
    return Spectrum(functions=functions, tests=tuple(tests)), groups


def test_a_second_bug_rivals_the_one_cause_only_as_strongly_as_the_weakest_function_its_story_needs() -> None:
    # Two bugs instead of one would need both callers buggy: the story is as strong as datetime_format's
    # 0.24, and the converter's 0.38 is CLEARLY ahead of that, though not of time_format's 0.29 alone.
    spectrum, groups = _offsets_in_two_formats(converter_passing=30)

    verdicts = Localization(spectrum, {}).verdicts(groups)

    assert {spectrum.functions[v.ranked[0].function].name for v in verdicts.values()} == {"tz_format"}
    assert all(v.strong and v.merges for v in verdicts.values())
    assert verdicts["gtime"].ranked[0].score == pytest.approx(5 / (5 * 35) ** 0.5)


def test_a_second_bug_whose_story_is_as_strong_as_the_one_cause_keeps_the_symptoms_apart() -> None:
    # The converter run by 60 passing tests scores 5 / sqrt(5 * 65) = 0.28: not CLEARLY ahead of the
    # weakest caller (0.24). Two bugs, one in each caller, would look the same: nothing is merged.
    spectrum, groups = _offsets_in_two_formats(converter_passing=60)

    verdicts = Localization(spectrum, {}).verdicts(groups)

    assert {g: spectrum.functions[v.ranked[0].function].name for g, v in verdicts.items()} == {
        "gtime": "time_format",
        "gdt": "datetime_format",
    }
    assert {v.order for v in verdicts.values()} == {0}, "no cause of the run: each symptom is read alone"


def test_a_rival_whose_story_leaves_failures_unexplained_is_weighed_alone() -> None:
    # Only time_format rivals the converter: the other two failures ran nothing but the converter, which a
    # second bug of the converter's own would explain as well. The rival's 0.29 is weighed alone, as
    # before: the converter's 5 / sqrt(5 * 30) = 0.41 is not CLEARLY ahead of it, and the converter's
    # symptom is not merged with time_format's.
    functions = (
        CodeFunction(file="iso/tz.py", name="tz_format", first=1, last=30),
        CodeFunction(file="iso/time.py", name="time_format", first=1, last=7),
    )
    tests = [Trace(node_id=f"tests/test_time.py::test_{n}", outcome="failed", functions=(0, 1)) for n in range(3)]
    tests += [Trace(node_id=f"tests/test_tz.py::test_{n}", outcome="failed", functions=(0,)) for n in range(2)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_t{n}", outcome="passed", functions=(0, 1)) for n in range(18)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_z{n}", outcome="passed", functions=(0,)) for n in range(7)]
    groups = {
        "gtime": [f"tests/test_time.py::test_{n}" for n in range(3)],
        "gtz": [f"tests/test_tz.py::test_{n}" for n in range(2)],
    }

    verdicts = Localization(Spectrum(functions=functions, tests=tuple(tests)), {}).verdicts(groups)

    assert functions[verdicts["gtime"].ranked[0].function].name == "time_format"
    assert {v.order for v in verdicts.values()} == {0}, "no cause of the run: each symptom is read alone"


def test_one_failing_test_never_names_a_low_scoring_function_it_ran() -> None:
    functions = (CodeFunction(file="pkg/a.py", name="f", first=1, last=2),)
    tests = (
        Trace(node_id="tests/test_a.py::test_x", outcome="failed", functions=(0,)),
        *(Trace(node_id=f"tests/test_a.py::test_{n}", outcome="passed", functions=(0,)) for n in range(20)),
    )

    verdict = Localization(Spectrum(functions=functions, tests=tests), {}).verdicts({"g": ["tests/test_a.py::test_x"]})

    assert not verdict["g"].strong  # 1 / sqrt(21) = 0.22: one failure is no evidence that f stands out


def test_the_function_most_failures_surfaced_in_comes_first_among_those_every_failure_ran() -> None:
    # tomlkit's parser helper raised at one line in 11 of 15 failures, through an exception whose
    # constructor only failing tests (and 14 passing ones) ran: 0.57 against the helper's 0.38.
    functions = (
        CodeFunction(file="toml/exceptions.py", name="InvalidChar.__init__", first=1, last=3),
        CodeFunction(file="toml/parser.py", name="Parser._escaped", first=820, last=850),
    )
    tests = [
        Trace(node_id=f"tests/test_p.py::test_{n}", outcome="failed", functions=(0, 1) if n < 11 else (1,))
        for n in range(15)
    ]
    tests += [Trace(node_id=f"tests/test_ok.py::test_{n}", outcome="passed", functions=(1,)) for n in range(91)]
    tests += [Trace(node_id=f"tests/test_bad.py::test_{n}", outcome="passed", functions=(0,)) for n in range(14)]
    groups = {"raised": [f"tests/test_p.py::test_{n}" for n in range(11)]}
    groups["asserted"] = [f"tests/test_p.py::test_{n}" for n in range(11, 15)]
    crashes = {f"tests/test_p.py::test_{n}": "toml/parser.py:835" for n in range(11)}
    crashes |= {f"tests/test_p.py::test_{n}": "tests/test_p.py:9" for n in range(11, 15)}
    spectrum = Spectrum(functions=functions, tests=tuple(tests))

    ranked_without = Localization(spectrum, {}).verdicts(groups)["raised"].ranked
    verdicts = Localization(spectrum, {}).verdicts(groups, crashes)

    assert functions[ranked_without[0].function].name == "InvalidChar.__init__"
    assert {functions[v.ranked[0].function].name for v in verdicts.values()} == {"Parser._escaped"}
    assert all(v.strong and v.merges for v in verdicts.values())


def test_a_function_only_one_failure_ran_is_no_rival_second_bug() -> None:
    # webcolors: a converter both failures ran (and 7 passing tests), 0.47; a caller of it that one
    # failure ran (and 2 passing tests), 0.41. A symptom seen once is no evidence of a second bug.
    functions = (
        CodeFunction(file="colors/conversion.py", name="rgb_to_percent", first=1, last=5),
        CodeFunction(file="colors/conversion.py", name="name_to_percent", first=7, last=9),
    )
    tests = (
        Trace(node_id="tests/test_c.py::test_rgb", outcome="failed", functions=(0,)),
        Trace(node_id="tests/test_c.py::test_name", outcome="failed", functions=(0, 1)),
        *(Trace(node_id=f"tests/test_ok.py::test_{n}", outcome="passed", functions=(0,)) for n in range(5)),
        *(Trace(node_id=f"tests/test_ok.py::test_n{n}", outcome="passed", functions=(0, 1)) for n in range(2)),
    )
    groups = {"g1": ["tests/test_c.py::test_rgb"], "g2": ["tests/test_c.py::test_name"]}

    verdicts = Localization(Spectrum(functions=functions, tests=tests), {}).verdicts(groups)

    assert {functions[v.ranked[0].function].name for v in verdicts.values()} == {"rgb_to_percent"}
    assert all(v.strong and v.merges for v in verdicts.values())


def _import_time_spectrum(codes_digest: str) -> Spectrum:
    """A colour table built at import (`FORE = Fore()` calls `Codes.__init__` at module level), two
    failing tests that read it and enter no project code, a passing one that paints."""
    functions = (
        CodeFunction(file="colors.py", name="Codes.__init__", first=2, last=5, digest=codes_digest),
        CodeFunction(file="colors.py", name="paint", first=22, last=23, digest="p", passing=1),
        CodeFunction(file="registry.py", name="register", first=3, last=7, digest="r"),
    )
    return Spectrum(
        functions=functions,
        tests=(
            Trace(node_id="test_colors.py::test_red", outcome="failed"),
            Trace(node_id="test_colors.py::test_green", outcome="failed"),
        ),
        passing_total=1,
        collected=(0, 2),
        test_modules=("test_colors.py",),
        recorder="sys.monitoring",
        in_run=True,
    )


IMPORT_TIME = {"gred": ["test_colors.py::test_red"], "ggreen": ["test_colors.py::test_green"]}
CLEAN_COLORS = {"colors.py::Codes.__init__": "c", "colors.py::paint": "p", "registry.py::register": "r"}


def test_a_changed_function_run_as_the_tests_were_collected_is_named_for_failures_that_entered_no_project_code() -> (
    None
):
    """A constructor called at module level ran before every test, though no test entered it: changed since
    the last run, it is the cause of the failures, and is said to have run as the tests were collected."""
    localization = Localization(_import_time_spectrum("c2"), CLEAN_COLORS, ["colors.py", "registry.py"])

    verdicts = localization.verdicts(IMPORT_TIME)

    for verdict in verdicts.values():
        top = localization.culprit(verdict.ranked[0])
        assert (top.file, top.function, top.changed, top.before_tests) == ("colors.py", "Codes.__init__", True, True)
        assert (top.failing, top.failing_total, top.passing, top.passing_total) == (2, 2, 1, 1)
        assert verdict.strong
    assert top.evidence() == "run before every test, as they were collected; changed since its tests last passed"
    assert localization.implicated() == {"colors.py::Codes.__init__": "run"}
    assert localization.unchanged(CLEAN_COLORS | {"test_colors.py::test_red": "t"}) == {}, "it ran a change"


def test_unchanged_functions_run_as_the_tests_were_collected_are_no_culprits() -> None:
    """Every test ran after them: unchanged, they tell no test from another, and are never named."""
    localization = Localization(_import_time_spectrum("c"), CLEAN_COLORS, ["colors.py", "registry.py"])

    verdicts = localization.verdicts(IMPORT_TIME)

    assert all(verdict.ranked == () and not verdict.strong for verdict in verdicts.values())


def test_a_changed_function_run_as_the_tests_were_collected_is_not_listed_as_run_by_no_test() -> None:
    spectrum = _import_time_spectrum("c2")
    code = CodeState(digests={**CLEAN_COLORS, "colors.py::Codes.__init__": "c2"}, files=("colors.py", "registry.py"))

    assert changed_untested(code, spectrum, CLEAN_COLORS, ["colors.py", "registry.py"]) == ()
    untested = spectrum.model_copy(update={"collected": (), "functions": spectrum.functions[1:]})
    assert changed_untested(code, untested, CLEAN_COLORS, ["colors.py", "registry.py"]) == (
        "colors.py::Codes.__init__",
    )


def test_a_failure_re_raised_from_a_class_set_up_counts_the_functions_its_traceback_shows() -> None:
    # lark: the Python grammar is loaded once, in a class's set-up. It raised in the first test, which
    # was recorded entering the loader; pytest re-raises the same error for the class's other 11 tests,
    # which enter nothing. Counted as recorded, the unescaping function ran in 1 of 12 failures (and
    # a thousand passing tests) and nothing stood out; its traceback shows it running in all 12.
    functions = (
        CodeFunction(file="lark/load_grammar.py", name="eval_escaping", first=540, last=563),
        CodeFunction(file="lark/load_grammar.py", name="_literal_to_pattern", first=566, last=596),
        CodeFunction(file="lark/lark.py", name="Lark.open_from_package", first=596, last=612),
    )
    failing = [f"tests/test_python.py::TestPython::test_{n}" for n in range(12)]
    tests = [Trace(node_id=failing[0], outcome="failed", functions=(0, 1, 2))]
    tests += [Trace(node_id=node_id, outcome="failed") for node_id in failing[1:]]
    tests += [Trace(node_id=f"tests/test_ok.py::test_{n}", outcome="passed", functions=(0, 1)) for n in range(1000)]
    spectrum = Spectrum(functions=functions, tests=tuple(tests), in_run=True)
    frames = {
        node_id: ("lark/lark.py:612", "lark/load_grammar.py:585", "lark/load_grammar.py:561") for node_id in failing
    }
    crashes = dict.fromkeys(failing, "lark/load_grammar.py:561")

    unseen = Localization(spectrum, {}).verdicts({"g": failing}, crashes)["g"]
    verdict = Localization(spectrum, {}, frames=frames).verdicts({"g": failing}, crashes)["g"]

    assert not unseen.strong
    assert verdict.strong
    assert verdict.cause is not None
    assert functions[verdict.cause.function].name == "eval_escaping"
    assert (verdict.cause.failing, verdict.cause.failing_total) == (12, 12)


def test_a_traceback_adds_only_what_ran_for_a_failure_and_never_to_a_passing_test() -> None:
    functions = (
        CodeFunction(file="pkg/core.py", name="outer", first=1, last=5),
        CodeFunction(file="pkg/core.py", name="inner", first=7, last=9),
    )
    tests = (
        Trace(node_id="tests/test_a.py::test_fails", outcome="failed"),
        Trace(node_id="tests/test_a.py::test_passes", outcome="passed"),
    )
    frames = {
        "tests/test_a.py::test_fails": ("tests/test_a.py:3", "pkg/core.py:8", "/usr/lib/python3.12/re.py:9"),
        "tests/test_a.py::test_passes": ("pkg/core.py:2",),
    }

    localization = Localization(Spectrum(functions=functions, tests=tests), {}, frames=frames)

    assert [trace.functions for trace in localization._tests] == [(1,), ()]


def test_a_function_every_failure_ran_comes_before_a_helper_one_failure_ran_that_outscores_it() -> None:
    # hyperlink: the authority getter both failures ran (and 47 of 97 passing tests), 0.20; a fragment
    # decoder that one of them ran (and 10 passing tests), 0.21. The decoder leaves the other failure
    # to a second bug, and a symptom seen once is no evidence of one.
    functions = (
        CodeFunction(file="src/hyperlink/_url.py", name="URL.authority", first=1186, last=1223),
        CodeFunction(file="src/hyperlink/_url.py", name="_decode_fragment_part", first=681, last=689),
        CodeFunction(file="src/hyperlink/_url.py", name="_decode_userinfo_part", first=631, last=639),
    )
    tests = [
        Trace(node_id="tests/test_url.py::test_fragment", outcome="failed", functions=(0, 1)),
        Trace(node_id="tests/test_url.py::test_userinfo", outcome="failed", functions=(0, 2)),
    ]
    tests += [Trace(node_id=f"tests/test_ok.py::test_{n}", outcome="passed", functions=(0,)) for n in range(27)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_f{n}", outcome="passed", functions=(0, 1)) for n in range(10)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_u{n}", outcome="passed", functions=(0, 2)) for n in range(10)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_o{n}", outcome="passed") for n in range(50)]
    groups = {"g1": ["tests/test_url.py::test_fragment"], "g2": ["tests/test_url.py::test_userinfo"]}

    verdicts = Localization(Spectrum(functions=functions, tests=tuple(tests)), {}).verdicts(groups)

    for verdict in verdicts.values():
        assert verdict.strong
        assert verdict.cause is not None
        assert functions[verdict.cause.function].name == "URL.authority"
        assert (verdict.cause.failing, verdict.cause.passing) == (2, 47)


def test_functions_the_same_tests_ran_are_ranked_the_larger_first() -> None:
    # h11: the response headers' clean-up (57 lines) and the 17-line header setter it always calls ran
    # in the same 11 failing and 6 passing tests. Line for line they are as suspicious: the fault more
    # likely lies among the larger one's lines.
    functions = (
        CodeFunction(file="h11/_headers.py", name="set_comma_header", first=256, last=272),
        CodeFunction(file="h11/_connection.py", name="Connection._clean_up", first=602, last=658),
    )
    tests = [Trace(node_id=f"tests/test_c.py::test_{n}", outcome="failed", functions=(0, 1)) for n in range(11)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_{n}", outcome="passed", functions=(0, 1)) for n in range(6)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_o{n}", outcome="passed") for n in range(50)]
    groups = {"g": [f"tests/test_c.py::test_{n}" for n in range(11)]}

    verdict = Localization(Spectrum(functions=functions, tests=tuple(tests)), {}).verdicts(groups)["g"]

    assert [functions[r.function].name for r in verdict.ranked] == ["Connection._clean_up", "set_comma_header"]
    assert verdict.ranked[0].score == verdict.ranked[1].score


def test_thousands_of_frames_are_looked_up_once_a_site_among_the_functions_of_their_file() -> None:
    # 500 failures with 20 frames each, 5,000 recorded functions: a frame is looked up once, among the
    # functions of its own file. Scanning every function for every frame took 13 s here (0.2 s now).
    functions = tuple(
        CodeFunction(file=f"pkg/m{i // 50}.py", name=f"f{i}", first=(i % 50) * 10 + 1, last=(i % 50) * 10 + 9)
        for i in range(5000)
    )
    failing = [f"tests/test_x.py::test_{n}" for n in range(500)]
    tests = [Trace(node_id=node_id, outcome="failed", functions=(n % 5000, 7)) for n, node_id in enumerate(failing)]
    tests += [Trace(node_id=f"tests/test_ok.py::test_{n}", outcome="passed", functions=(n,)) for n in range(2000)]
    frames = {
        node_id: tuple(f"pkg/m{(n + k) % 100}.py:{(k * 37) % 500 + 1}" for k in range(20))
        for n, node_id in enumerate(failing)
    }
    groups = {f"g{g}": failing[g::20] for g in range(20)}

    started = time.perf_counter()
    localization = Localization(Spectrum(functions=functions, tests=tuple(tests)), {}, frames=frames)
    verdicts = localization.verdicts(groups, {node_id: shown[-1] for node_id, shown in frames.items()})
    seconds = time.perf_counter() - started

    assert len(verdicts) == 20
    assert all(len(trace.functions) > 2 for trace in localization._tests[:500]), "the frames' functions counted"
    assert seconds < 3.0, f"{seconds:.1f} s"


VERSIONS = (
    CodeFunction(
        file="semver/version.py",
        name="compare",
        first=10,
        last=20,
        passing=7,
        passing_lines=((11, 7), (12, 5), (14, 2), (19, 2)),
    ),
    CodeFunction(
        file="semver/version.py", name="sort_versions", first=30, last=32, passing=1, passing_lines=((31, 1), (32, 1))
    ),
)
COMPARE, SORT = range(2)


def versions_spectrum(*, lines: bool = True) -> Spectrum:
    """Seven passing tests enter `compare`; the two failing ones run its line 20, which none of them ran, through
    `sort_versions`, which only one passing test enters."""
    ran = ((COMPARE, 11), (COMPARE, 12), (COMPARE, 14), (COMPARE, 20), (SORT, 31), (SORT, 32))
    failing = tuple(
        Trace(
            node_id=f"tests/test_sort.py::test_pre[{i}]",
            outcome="failed",
            functions=(COMPARE, SORT),
            lines=ran if lines else (),
        )
        for i in range(2)
    )
    functions = VERSIONS if lines else tuple(f.model_copy(update={"passing_lines": ()}) for f in VERSIONS)
    return Spectrum(
        functions=functions, tests=failing, passing_total=8, test_modules=("tests/test_sort.py",), in_run=True
    )


def test_a_function_most_passing_tests_enter_is_named_by_the_line_only_the_failing_tests_ran() -> None:
    groups = {"g": [f"tests/test_sort.py::test_pre[{i}]" for i in range(2)]}
    by_function = Localization(versions_spectrum(lines=False), {})
    # Without lines, the sorter that one passing test entered outscores the comparison seven entered.
    assert by_function.culprit(by_function.verdicts(groups)["g"].ranked[0]).function == "sort_versions"

    localization = Localization(versions_spectrum(), {})
    verdict = localization.verdicts(groups)["g"]

    top = localization.culprit(verdict.ranked[0])
    assert (top.function, top.line, top.failing, top.passing, top.passing_total, top.score) == (
        "compare",
        20,
        2,
        0,
        8,
        1.0,
    )
    assert top.where == "semver/version.py::compare (lines 10-20), line 20"
    assert verdict.strong
    # The sorter is as suspicious as its most telling line, which the passing test ran too.
    second = localization.culprit(verdict.ranked[1])
    assert (second.function, second.passing, second.score) == ("sort_versions", 1, 0.82)


def test_a_line_counts_only_for_a_function_the_failing_test_was_recorded_entering() -> None:
    """A line of a function pytest itself called for a failing test (a repr explaining its assertion) is no
    evidence: the function is not among those the test entered, and its lines are not read."""
    spectrum = versions_spectrum()
    failing = tuple(trace.model_copy(update={"functions": (SORT,)}) for trace in spectrum.tests)
    localization = Localization(spectrum.model_copy(update={"tests": failing}), {})

    verdict = localization.verdicts({"g": [trace.node_id for trace in failing]})["g"]

    assert [localization.culprit(r).function for r in verdict.ranked] == ["sort_versions"]


def test_a_changed_function_counts_for_every_failing_test_that_entered_it_whichever_lines_they_ran() -> None:
    """The edit is the evidence: all four failures met the changed `message`, though only two ran the line that
    tells most apart from the passing tests. Read by that line, it would explain two of them and leave the other
    symptom without its cause."""
    message = CodeFunction(
        file="shop/errors.py",
        name="message",
        first=9,
        last=12,
        digest="new",
        passing=20,
        passing_lines=((10, 20),),
    )
    failing = tuple(
        Trace(
            node_id=f"tests/test_errors.py::test_{i}",
            outcome="failed",
            functions=(0,),
            lines=((0, 10), (0, 12)) if i < 2 else ((0, 10),),
        )
        for i in range(4)
    )
    spectrum = Spectrum(functions=(message,), tests=failing, passing_total=20, in_run=True)
    localization = Localization(spectrum, {"shop/errors.py::message": "old"})

    verdicts = localization.verdicts({"a": [t.node_id for t in failing[:2]], "b": [t.node_id for t in failing[2:]]})

    for verdict in verdicts.values():
        assert verdict.cause is not None
        cause = localization.culprit(verdict.cause)
        assert (cause.function, cause.changed_since, cause.failing, cause.passing, cause.line) == (
            "message",
            "run",
            4,
            20,
            None,
        )
