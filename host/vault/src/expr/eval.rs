//! Evaluating an expression for one file of the vault: the tree walked
//! node by node, the base's formulas (each computed once per file, a circle
//! refused), the per-item methods, within the query's budget. What a file
//! holds comes from [`super::env`].

use std::cell::RefCell;
use std::cmp::Ordering;

use super::Fault;
use super::env::{Budget, Env};
use super::parse::{Bin, Ex, Node};
use super::value::{FileRef, Val, compare, heavy};

/// The most characters a text an expression builds may have.
const MAX_TEXT: usize = 1 << 20;

/// The most items a list an expression joins may have (`reduce` could
/// double one at each step).
const MAX_ITEMS: usize = 1 << 16;

/// Evaluation steps between two looks at the budget.
const CHECK_EVERY: u32 = 64;

/// The deepest evaluations may nest (a node inside another, formulas
/// inside formulas, the argument of a per-item method): each level is a
/// recursion, and 1,024 of them fit in well under the 2 MiB stack of the
/// threads queries run on (a test evaluates that deep on a 1 MiB stack).
pub const MAX_NEST: u32 = 1024;

/// One file being evaluated, with the formulas computed for it so far.
pub struct Row {
    pub file: FileRef,
    /// The task of the file's note evaluated (vault_tasks), or none: the
    /// file is.
    pub task: Option<u32>,
    memo: RefCell<Vec<Slot>>,
    /// How many formulas are being computed, one inside another.
    depth: std::cell::Cell<usize>,
    /// Evaluation steps taken, for the budget's looks.
    steps: std::cell::Cell<u32>,
    /// How deep the evaluation is now.
    nest: std::cell::Cell<u32>,
}

/// One level of evaluation, given back when it ends.
pub(super) struct Level<'r>(&'r std::cell::Cell<u32>);

impl Drop for Level<'_> {
    fn drop(&mut self) {
        self.0.set(self.0.get() - 1);
    }
}

/// The deepest formulas may use one another (each level is a recursion).
const MAX_FORMULA_DEPTH: usize = 32;

#[derive(Clone)]
enum Slot {
    Empty,
    Busy,
    Done(Val),
}

impl Row {
    pub fn new(file: FileRef, formulas: usize) -> Row {
        Row {
            file,
            task: None,
            memo: RefCell::new(vec![Slot::Empty; formulas]),
            depth: std::cell::Cell::new(0),
            steps: std::cell::Cell::new(CHECK_EVERY - 1),
            nest: std::cell::Cell::new(0),
        }
    }

    /// One evaluation step at column `at`, one level deeper: the budget is
    /// looked at every [`CHECK_EVERY`] steps.
    pub(super) fn enter(&self, at: usize, budget: &Budget<'_>) -> Result<Level<'_>, Fault> {
        let steps = self.steps.get().wrapping_add(1);
        self.steps.set(steps);
        if steps.is_multiple_of(CHECK_EVERY) {
            budget.check(at)?;
        }
        if self.nest.get() >= MAX_NEST {
            return Err(fault(
                format!("an evaluation nested more than {MAX_NEST} deep"),
                at,
            ));
        }
        self.nest.set(self.nest.get() + 1);
        Ok(Level(&self.nest))
    }

    /// The same, for another file (its memory kept). Its first step looks
    /// at the budget: a file's first steps may be heavy (`split()` of a
    /// long text), and a query past its deadline starts no file.
    pub fn reset(&mut self, file: FileRef) {
        self.file = file;
        self.task = None;
        self.memo.get_mut().fill(Slot::Empty);
        self.depth.set(0);
        self.nest.set(0);
        self.steps.set(CHECK_EVERY - 1);
    }

    /// The next task of the same note: its steps go on counting, so the
    /// budget is looked at every [`CHECK_EVERY`] steps across the note's
    /// tasks rather than at each task's first (a note's tasks are many and
    /// small; the note's first step looked already).
    pub fn next_task(&mut self, task: u32) {
        self.task = Some(task);
        self.memo.get_mut().fill(Slot::Empty);
        self.depth.set(0);
        self.nest.set(0);
    }
}

/// The variables of `filter`, `map` and `reduce`, and of a summary.
#[derive(Clone, Copy, Default)]
pub struct Vars<'v> {
    value: Option<&'v Val>,
    index: Option<usize>,
    acc: Option<&'v Val>,
    pub values: Option<&'v Val>,
}

impl<'v> Vars<'v> {
    pub fn summary(values: &'v Val) -> Vars<'v> {
        Vars {
            values: Some(values),
            ..Vars::default()
        }
    }
}

fn fault(message: impl Into<String>, at: usize) -> Fault {
    Fault::new(message, at)
}

impl Env<'_> {
    /// Whether `e` holds for the file of `row`.
    pub fn test(&self, e: &Ex, row: &Row) -> Result<bool, Fault> {
        Ok(self.eval(e, row, Vars::default())?.truthy())
    }

    pub fn eval(&self, e: &Ex, row: &Row, vars: Vars<'_>) -> Result<Val, Fault> {
        let _level = row.enter(e.at, &self.budget)?;
        self.node(e, row, vars)
    }

    fn node(&self, e: &Ex, row: &Row, vars: Vars<'_>) -> Result<Val, Fault> {
        let at = e.at;
        Ok(match &e.node {
            Node::Lit(v) => v.clone(),
            Node::List(items) => heavy(
                Val::List(
                    items
                        .iter()
                        .map(|i| self.eval(i, row, vars))
                        .collect::<Result<_, _>>()?,
                ),
                at,
            )?,
            Node::Object(entries) => heavy(
                Val::Obj(
                    entries
                        .iter()
                        .map(|(k, e)| Ok((k.clone(), self.eval(e, row, vars)?)))
                        .collect::<Result<_, Fault>>()?,
                ),
                at,
            )?,
            Node::Prop(name) => match row.task {
                Some(t) => self.task_prop(row.file, t, name, at)?,
                None => self.prop(row.file, name, at)?,
            },
            Node::NoteProp(name) => self.prop(row.file, name, at)?,
            Node::File => Val::File(row.file),
            Node::This => self.this.map_or(Val::Null, Val::File),
            Node::ThisProp(name) => match self.this {
                Some(f) => self.prop(f, name, at)?,
                None => Val::Null,
            },
            Node::Formula(name) => self.formula(name, row, at)?,
            Node::Var(name) => match *name {
                "value" => vars.value.cloned().unwrap_or(Val::Null),
                "index" => vars.index.map_or(Val::Null, |i| Val::Num(i as f64)),
                "acc" => vars.acc.cloned().unwrap_or(Val::Null),
                _ => vars.values.cloned().unwrap_or(Val::Null),
            },
            Node::Field(on, name) => {
                let v = self.eval(on, row, vars)?;
                self.field(&v, name, at)?
            }
            Node::Index(on, i) => {
                let v = self.eval(on, row, vars)?;
                let i = self.eval(i, row, vars)?;
                index(&v, &i)
            }
            Node::Not(x) => Val::Bool(!self.eval(x, row, vars)?.truthy()),
            Node::Neg(x) => match self.eval(x, row, vars)? {
                Val::Num(n) => Val::Num(-n),
                Val::Dur(d) => Val::Dur(d.scaled(-1.0)),
                Val::Null => Val::Null,
                v => return Err(fault(format!("`-` cannot negate a {}", v.type_name()), at)),
            },
            Node::Bin(op, a, b) => self.binary(*op, a, b, row, vars)?,
            Node::Call(f, args) => self.call(f, args, row, vars, at)?,
            Node::Method(on, m, args) => {
                let v = self.eval(on, row, vars)?;
                self.method(v, m, args, row, vars, at)?
            }
        })
    }

    fn formula(&self, name: &str, row: &Row, at: usize) -> Result<Val, Fault> {
        let Some(k) = self.formulas.iter().position(|(n, _)| n == name) else {
            return Err(fault(
                format!("`formula.{name}` is not one of the base's formulas"),
                at,
            ));
        };
        let slot = row.memo.borrow()[k].clone();
        match slot {
            Slot::Done(v) => return Ok(v),
            Slot::Busy => {
                return Err(fault(format!("`formula.{name}` refers to itself"), at));
            }
            Slot::Empty => {}
        }
        if row.depth.get() >= MAX_FORMULA_DEPTH {
            return Err(fault(
                format!("formulas that use formulas more than {MAX_FORMULA_DEPTH} deep"),
                at,
            ));
        }
        row.memo.borrow_mut()[k] = Slot::Busy;
        row.depth.set(row.depth.get() + 1);
        let v = self.eval(&self.formulas[k].1, row, Vars::default());
        row.depth.set(row.depth.get() - 1);
        row.memo.borrow_mut()[k] = match &v {
            Ok(v) => Slot::Done(v.clone()),
            Err(_) => Slot::Empty,
        };
        v
    }

    fn binary(&self, op: Bin, a: &Ex, b: &Ex, row: &Row, vars: Vars<'_>) -> Result<Val, Fault> {
        let at = a.at;
        let x = self.eval(a, row, vars)?;
        match op {
            Bin::And if !x.truthy() => return Ok(Val::Bool(false)),
            Bin::Or if x.truthy() => return Ok(Val::Bool(true)),
            _ => {}
        }
        let y = self.eval(b, row, vars)?;
        let ord = || compare(&x, &y);
        Ok(match op {
            Bin::And | Bin::Or => Val::Bool(y.truthy()),
            Bin::Eq => Val::Bool(self.equal(&x, &y)),
            Bin::Ne => Val::Bool(!self.equal(&x, &y)),
            Bin::Lt => Val::Bool(ord() == Some(Ordering::Less)),
            Bin::Le => Val::Bool(matches!(ord(), Some(Ordering::Less | Ordering::Equal))),
            Bin::Gt => Val::Bool(ord() == Some(Ordering::Greater)),
            Bin::Ge => Val::Bool(matches!(ord(), Some(Ordering::Greater | Ordering::Equal))),
            Bin::Add | Bin::Sub => self.add(op == Bin::Add, x, y, at)?,
            Bin::Mul | Bin::Div | Bin::Rem => arith(op, x, y, at)?,
        })
    }

    /// `x + y` (or `x - y`), adding to `x` in place where it can: a text
    /// or a list is extended, not copied.
    fn add(&self, plus: bool, x: Val, y: Val, at: usize) -> Result<Val, Fault> {
        let sign = if plus { 1 } else { -1 };
        Ok(match (x, y) {
            (Val::Null, _) | (_, Val::Null) => Val::Null,
            (Val::Num(a), Val::Num(b)) => Val::Num(a + sign as f64 * b),
            (Val::Date(d), other) if other.as_dur().is_some() => {
                let dur = other.as_dur().expect("checked");
                Val::Date(d.add(dur, sign).ok_or_else(|| {
                    fault(
                        "a date past the range dates hold (years -262143 to 262142)",
                        at,
                    )
                })?)
            }
            (Val::Date(a), Val::Date(b)) if !plus => Val::Num(a.ms as f64 - b.ms as f64),
            (Val::Dur(a), Val::Dur(b)) => Val::Dur(a.plus(b, sign)),
            (x @ Val::Str(_), y) | (x, y @ Val::Str(_)) if plus => {
                let mut s = match x {
                    Val::Str(s) => s,
                    x => self.text(&x),
                };
                s.push_str(&self.text(&y));
                if s.len() > MAX_TEXT {
                    return Err(fault("a text over 1 MiB", at));
                }
                Val::Str(s)
            }
            (Val::List(mut a), Val::List(b)) if plus => {
                if a.len() + b.len() > MAX_ITEMS {
                    return Err(fault(format!("a list of more than {MAX_ITEMS} items"), at));
                }
                a.extend(b);
                heavy(Val::List(a), at)?
            }
            (x, y) => {
                return Err(fault(
                    format!(
                        "`{}` does not apply to a {} and a {}",
                        if plus { "+" } else { "-" },
                        x.type_name(),
                        y.type_name()
                    ),
                    at,
                ));
            }
        })
    }

    fn call(
        &self,
        f: &str,
        args: &[Ex],
        row: &Row,
        vars: Vars<'_>,
        at: usize,
    ) -> Result<Val, Fault> {
        if f == "if" {
            let [c, rest @ ..] = args else {
                return Err(fault("`if()` takes a condition and one or two values", at));
            };
            if rest.is_empty() || rest.len() > 2 {
                return Err(fault("`if()` takes a condition and one or two values", at));
            }
            return if self.eval(c, row, vars)?.truthy() {
                self.eval(&rest[0], row, vars)
            } else {
                rest.get(1)
                    .map_or(Ok(Val::Null), |e| self.eval(e, row, vars))
            };
        }
        let a: Vec<Val> = args
            .iter()
            .map(|e| self.eval(e, row, vars))
            .collect::<Result<_, _>>()?;
        super::call::global(self, f, &a, at)
    }

    fn method(
        &self,
        v: Val,
        m: &str,
        args: &[Ex],
        row: &Row,
        vars: Vars<'_>,
        at: usize,
    ) -> Result<Val, Fault> {
        // The per-item methods evaluate their argument once per item.
        if let ("filter" | "map" | "reduce", Val::List(items)) = (m, &v) {
            return self.per_item(m, items, args, row, vars, at);
        }
        let a: Vec<Val> = args
            .iter()
            .map(|e| self.eval(e, row, vars))
            .collect::<Result<_, _>>()?;
        super::call::method(self, v, m, &a, at)
    }

    fn per_item(
        &self,
        m: &str,
        items: &[Val],
        args: &[Ex],
        row: &Row,
        vars: Vars<'_>,
        at: usize,
    ) -> Result<Val, Fault> {
        let Some(body) = args.first() else {
            return Err(fault(
                format!("`{m}()` takes an expression of `value` and `index`"),
                at,
            ));
        };
        let with = |value: &Val, index: usize, acc: Option<&Val>| -> Result<Val, Fault> {
            self.eval(
                body,
                row,
                Vars {
                    value: Some(value),
                    index: Some(index),
                    acc,
                    values: vars.values,
                },
            )
        };
        Ok(match m {
            "filter" => {
                let mut out = Vec::new();
                for (i, v) in items.iter().enumerate() {
                    if with(v, i, None)?.truthy() {
                        out.push(v.clone());
                    }
                }
                Val::List(out)
            }
            "map" => {
                let mut out = Vec::with_capacity(items.len());
                let mut held = 0;
                for (i, v) in items.iter().enumerate() {
                    let x = with(v, i, None)?;
                    held += super::value::weight(&x);
                    if held > super::value::MAX_WEIGHT {
                        return Err(fault("`map()` would make a value over 4 MiB", at));
                    }
                    out.push(x);
                }
                Val::List(out)
            }
            _ => {
                let mut acc = match args.get(1) {
                    Some(e) => self.eval(e, row, vars)?,
                    None => Val::Null,
                };
                // `acc + x` adds to the accumulator in place: read as
                // written, each item would copy it whole (n items, n²/2
                // bytes copied: 200,000 one-letter items took 4.9 s).
                let added = match &body.node {
                    Node::Bin(Bin::Add, l, r) if matches!(l.node, Node::Var("acc")) => Some(&**r),
                    _ => None,
                };
                let mut held = super::value::weight(&acc);
                for (i, v) in items.iter().enumerate() {
                    acc = match added {
                        Some(r) => {
                            let _level = row.enter(body.at, &self.budget)?;
                            let x = self.eval(
                                r,
                                row,
                                Vars {
                                    value: Some(v),
                                    index: Some(i),
                                    acc: Some(&acc),
                                    values: vars.values,
                                },
                            )?;
                            match (acc, x) {
                                // A list weighed by what is added to it,
                                // not again whole at each item.
                                (Val::List(mut a), Val::List(b)) => {
                                    if a.len() + b.len() > MAX_ITEMS {
                                        return Err(fault(
                                            format!("a list of more than {MAX_ITEMS} items"),
                                            at,
                                        ));
                                    }
                                    held += b.iter().map(super::value::weight).sum::<usize>();
                                    a.extend(b);
                                    Val::List(a)
                                }
                                // Anything else weighs what it is (a text's
                                // weight is its length: no walk).
                                (acc, x) => {
                                    let sum = self.add(true, acc, x, at)?;
                                    held = match &sum {
                                        Val::List(_) => held,
                                        other => super::value::weight(other),
                                    };
                                    sum
                                }
                            }
                        }
                        None => {
                            let x = with(v, i, Some(&acc))?;
                            held = super::value::weight(&x);
                            x
                        }
                    };
                    if held > super::value::MAX_WEIGHT {
                        return Err(fault("`reduce()` would make a value over 4 MiB", at));
                    }
                }
                acc
            }
        })
    }
}

fn index(v: &Val, i: &Val) -> Val {
    match (v, i) {
        (Val::List(l), Val::Num(n)) if *n >= 0.0 => {
            l.get(*n as usize).cloned().unwrap_or(Val::Null)
        }
        (Val::Str(s), Val::Num(n)) if *n >= 0.0 => s
            .chars()
            .nth(*n as usize)
            .map_or(Val::Null, |c| Val::Str(c.to_string())),
        (Val::Obj(o), Val::Str(k)) => o
            .iter()
            .find(|(n, _)| n == k)
            .map_or(Val::Null, |(_, v)| v.clone()),
        _ => Val::Null,
    }
}

fn arith(op: Bin, x: Val, y: Val, at: usize) -> Result<Val, Fault> {
    Ok(match (&x, &y) {
        (Val::Null, _) | (_, Val::Null) => Val::Null,
        (Val::Num(a), Val::Num(b)) => Val::Num(match op {
            Bin::Mul => a * b,
            Bin::Div => a / b,
            _ => a % b,
        }),
        (Val::Dur(d), Val::Num(n)) if op != Bin::Rem => {
            Val::Dur(d.scaled(if op == Bin::Mul { *n } else { 1.0 / n }))
        }
        _ => {
            let sym = match op {
                Bin::Mul => "*",
                Bin::Div => "/",
                _ => "%",
            };
            return Err(fault(
                format!(
                    "`{sym}` does not apply to a {} and a {}",
                    x.type_name(),
                    y.type_name()
                ),
                at,
            ));
        }
    })
}
