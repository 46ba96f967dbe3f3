//! Python expressions and parameter lists: parsed from tokens into a small syntax tree and printed
//! back the way CPython 3.11's `ast.unparse` prints them (its precedence-driven parentheses,
//! spacing and literal normalisation: `0x10` → `16`, `"s"` → `'s'`, `1e3` → `1000.0`).
//!
//! Constructs a definition header rarely holds are not modelled (comprehensions, f-strings,
//! `yield`, `:=`, `\N{...}` escapes and lone surrogates in string literals): they are reported as
//! [`Fail::Unsupported`] so the caller can print the source text instead.

use super::pytoken::{Kind, Token};
use agentteams_mcp::json::{write_python_float, Value};

/// Nesting of expressions (brackets, unary operators, lambdas) parsed before giving up: the
/// parser recurses once per level.
pub const MAX_EXPR_DEPTH: usize = 100;
/// CPython 3.11's `sys.get_int_max_str_digits()` default: a longer decimal literal is a syntax
/// error, and `ast.unparse` of a larger integer raises `ValueError`.
pub const INT_MAX_STR_DIGITS: usize = 4300;

/// Why a header could not be rendered.
#[derive(Debug, PartialEq, Eq)]
pub enum Fail {
    /// CPython's parser would reject it.
    Syntax,
    /// Valid Python this renderer does not model.
    Unsupported,
}

type Parsed<T> = Result<T, Fail>;

/// A constant, as `ast.Constant` holds it.
#[derive(Debug, Clone)]
pub enum Const {
    /// Decimal digits, or `None` when longer than [`INT_MAX_STR_DIGITS`].
    Int(Option<String>),
    Float(f64),
    Imaginary(f64),
    Str {
        value: String,
        u_prefix: bool,
    },
    Bytes(Vec<u8>),
    True,
    False,
    None,
    Ellipsis,
}

/// A keyword argument: `name=value`, or `**value` without a name.
pub type Keyword = (Option<String>, Expr);

/// An expression node.
#[derive(Debug, Clone)]
pub enum Expr {
    Name(String),
    Const(Const),
    Attribute(Box<Expr>, String),
    Call(Box<Expr>, Vec<Expr>, Vec<Keyword>),
    Subscript(Box<Expr>, Box<Expr>),
    Slice(Option<Box<Expr>>, Option<Box<Expr>>, Option<Box<Expr>>),
    Tuple(Vec<Expr>),
    List(Vec<Expr>),
    Set(Vec<Expr>),
    Dict(Vec<(Option<Expr>, Expr)>),
    Starred(Box<Expr>),
    Unary(&'static str, Box<Expr>),
    Binary(Box<Expr>, &'static str, Box<Expr>),
    Bool(&'static str, Vec<Expr>),
    Compare(Box<Expr>, Vec<(&'static str, Expr)>),
    IfElse(Box<Expr>, Box<Expr>, Box<Expr>),
    Lambda(Box<Params>, Box<Expr>),
    Await(Box<Expr>),
    /// A construct this module does not model, printed as its source with whitespace collapsed.
    Raw(String),
}

/// One parameter.
#[derive(Debug, Clone)]
pub struct Param {
    pub name: String,
    pub annotation: Option<Expr>,
    pub default: Option<Expr>,
}

/// A parameter list, as `ast.arguments` holds it.
#[derive(Debug, Clone, Default)]
pub struct Params {
    pub positional_only: Vec<Param>,
    pub positional: Vec<Param>,
    pub var_positional: Option<Param>,
    pub keyword_only: Vec<Param>,
    pub var_keyword: Option<Param>,
}

/// `ast.unparse`'s precedence levels (`_Precedence`).
mod prec {
    pub const TUPLE: u8 = 2;
    pub const TEST: u8 = 4;
    pub const OR: u8 = 5;
    pub const AND: u8 = 6;
    pub const NOT: u8 = 7;
    pub const CMP: u8 = 8;
    pub const EXPR: u8 = 9;
    pub const BOR: u8 = 9;
    pub const BXOR: u8 = 10;
    pub const BAND: u8 = 11;
    pub const SHIFT: u8 = 12;
    pub const ARITH: u8 = 13;
    pub const TERM: u8 = 14;
    pub const FACTOR: u8 = 15;
    pub const POWER: u8 = 16;
    pub const AWAIT: u8 = 17;
    pub const ATOM: u8 = 18;

    /// `_Precedence.next()`: one level tighter, saturating at ATOM.
    pub fn next(p: u8) -> u8 {
        (p + 1).min(ATOM)
    }
}

/// Binary operator levels, loosest first; each is left-associative.
const BINARY_LEVELS: &[(u8, &[&str])] = &[
    (prec::BOR, &["|"]),
    (prec::BXOR, &["^"]),
    (prec::BAND, &["&"]),
    (prec::SHIFT, &["<<", ">>"]),
    (prec::ARITH, &["+", "-"]),
    (prec::TERM, &["*", "/", "//", "%", "@"]),
];

fn binary_precedence(op: &str) -> u8 {
    if op == "**" {
        return prec::POWER;
    }
    BINARY_LEVELS
        .iter()
        .find(|(_, ops)| ops.contains(&op))
        .map_or(prec::ATOM, |(p, _)| *p)
}

/// A recursive-descent parser over a token slice (Python 3.11's expression grammar).
pub struct Parser<'a> {
    src: &'a str,
    toks: &'a [Token],
    pub pos: usize,
    depth: usize,
}

impl<'a> Parser<'a> {
    pub fn new(src: &'a str, toks: &'a [Token], pos: usize) -> Parser<'a> {
        Parser {
            src,
            toks,
            pos,
            depth: 0,
        }
    }

    fn text(&self, at: usize) -> &'a str {
        self.toks.get(at).map_or("", |t| t.text(self.src))
    }

    fn kind(&self, at: usize) -> Option<Kind> {
        self.toks.get(at).map(|t| t.kind)
    }

    /// Whether the token at `pos + ahead` is operator `op`.
    fn op_at(&self, ahead: usize, op: &str) -> bool {
        self.kind(self.pos + ahead) == Some(Kind::Op) && self.text(self.pos + ahead) == op
    }

    pub fn at_op(&self, op: &str) -> bool {
        self.op_at(0, op)
    }

    fn at_keyword(&self, word: &str) -> bool {
        self.kind(self.pos) == Some(Kind::Name) && self.text(self.pos) == word
    }

    pub fn eat_op(&mut self, op: &str) -> bool {
        let found = self.at_op(op);
        self.pos += usize::from(found);
        found
    }

    fn eat_keyword(&mut self, word: &str) -> bool {
        let found = self.at_keyword(word);
        self.pos += usize::from(found);
        found
    }

    pub fn expect_op(&mut self, op: &str) -> Parsed<()> {
        if self.eat_op(op) {
            Ok(())
        } else {
            Err(Fail::Syntax)
        }
    }

    /// A name that is not a keyword.
    pub fn name(&mut self) -> Parsed<String> {
        let word = self.text(self.pos);
        if self.kind(self.pos) != Some(Kind::Name) || self.toks[self.pos].keyword {
            return Err(Fail::Syntax);
        }
        self.pos += 1;
        Ok(word.to_owned())
    }

    fn nested<T>(&mut self, parse: impl FnOnce(&mut Self) -> Parsed<T>) -> Parsed<T> {
        if self.depth >= MAX_EXPR_DEPTH {
            return Err(Fail::Unsupported);
        }
        self.depth += 1;
        let result = parse(self);
        self.depth -= 1;
        result
    }

    /// `parse`, or when it meets something unmodelled, the source up to the next `,`, `)` or
    /// one of `stops` outside brackets and lambda parameter lists, as an [`Expr::Raw`].
    pub fn or_raw(
        &mut self,
        stops: &[&str],
        parse: impl FnOnce(&mut Self) -> Parsed<Expr>,
    ) -> Parsed<Expr> {
        let start = self.pos;
        match parse(self) {
            Err(Fail::Unsupported) => {}
            other => return other,
        }
        let mut depth = 0usize;
        // Lambdas whose `:` has not been seen: their `,` and `=` are not stops.
        let mut open_lambdas = 0usize;
        let mut end = start;
        while let Some(kind) = self.kind(end) {
            let text = self.text(end);
            match (kind, text) {
                (Kind::Newline, _) => return Err(Fail::Syntax),
                (Kind::Op, "(" | "[" | "{") => depth += 1,
                (Kind::Op, ")" | "]" | "}") if depth > 0 => depth -= 1,
                (Kind::Name, "lambda") if depth == 0 => open_lambdas += 1,
                (Kind::Op, ":") if depth == 0 && open_lambdas > 0 => open_lambdas -= 1,
                (Kind::Op, t)
                    if depth == 0
                        && (t == ")" || open_lambdas == 0 && (t == "," || stops.contains(&t))) =>
                {
                    break
                }
                _ => {}
            }
            end += 1;
        }
        if end == start {
            return Err(Fail::Syntax);
        }
        self.pos = end;
        let (from, to) = (self.toks[start].start(), self.toks[end - 1].end());
        Ok(Expr::Raw(crate::corpus::text::collapse_whitespace(
            &self.src[from..to],
        )))
    }

    /// `expression`: a conditional expression, a lambda or a disjunction.
    pub fn expression(&mut self) -> Parsed<Expr> {
        self.nested(|p| {
            if p.eat_keyword("lambda") {
                let params = p.parameters(":", false)?;
                p.expect_op(":")?;
                let body = p.expression()?;
                return Ok(Expr::Lambda(Box::new(params), Box::new(body)));
            }
            let body = p.disjunction()?;
            if !p.eat_keyword("if") {
                return Ok(body);
            }
            let test = p.disjunction()?;
            if !p.eat_keyword("else") {
                return Err(Fail::Syntax);
            }
            let orelse = p.expression()?;
            Ok(Expr::IfElse(
                Box::new(body),
                Box::new(test),
                Box::new(orelse),
            ))
        })
    }

    /// `named_expression`: walrus targets are not modelled.
    fn named_expression(&mut self) -> Parsed<Expr> {
        let e = self.expression()?;
        if self.at_op(":=") {
            return Err(Fail::Unsupported);
        }
        Ok(e)
    }

    /// `star_named_expression`: `*bitwise_or` or a named expression.
    fn star_named_expression(&mut self) -> Parsed<Expr> {
        if self.eat_op("*") {
            return Ok(Expr::Starred(Box::new(self.binary(0)?)));
        }
        self.named_expression()
    }

    fn bool_chain(&mut self, word: &'static str) -> Parsed<Expr> {
        let operand = |p: &mut Self| {
            if word == "or" {
                p.bool_chain("and")
            } else {
                p.inversion()
            }
        };
        let first = operand(self)?;
        if !self.at_keyword(word) {
            return Ok(first);
        }
        let mut values = vec![first];
        while self.eat_keyword(word) {
            values.push(operand(self)?);
        }
        Ok(Expr::Bool(word, values))
    }

    fn disjunction(&mut self) -> Parsed<Expr> {
        self.bool_chain("or")
    }

    fn inversion(&mut self) -> Parsed<Expr> {
        if self.eat_keyword("not") {
            return self.nested(|p| Ok(Expr::Unary("not", Box::new(p.inversion()?))));
        }
        self.comparison()
    }

    fn compare_op(&mut self) -> Option<&'static str> {
        const OPS: &[&str] = &["==", "!=", "<", ">", "<=", ">="];
        if self.kind(self.pos) == Some(Kind::Op) {
            let op = OPS.iter().find(|op| **op == self.text(self.pos))?;
            self.pos += 1;
            return Some(op);
        }
        if self.eat_keyword("in") {
            return Some("in");
        }
        if self.at_keyword("not") && self.text(self.pos + 1) == "in" {
            self.pos += 2;
            return Some("not in");
        }
        if self.eat_keyword("is") {
            return Some(if self.eat_keyword("not") {
                "is not"
            } else {
                "is"
            });
        }
        None
    }

    fn comparison(&mut self) -> Parsed<Expr> {
        let left = self.binary(0)?;
        let mut rest = Vec::new();
        while let Some(op) = self.compare_op() {
            rest.push((op, self.binary(0)?));
        }
        if rest.is_empty() {
            Ok(left)
        } else {
            Ok(Expr::Compare(Box::new(left), rest))
        }
    }

    /// The left-associative binary levels from `BINARY_LEVELS[level]` down to `factor`.
    fn binary(&mut self, level: usize) -> Parsed<Expr> {
        let Some(&(_, ops)) = BINARY_LEVELS.get(level) else {
            return self.factor();
        };
        let mut left = self.binary(level + 1)?;
        while let Some(op) = ops.iter().find(|op| self.at_op(op)) {
            self.pos += 1;
            let right = self.binary(level + 1)?;
            left = Expr::Binary(Box::new(left), op, Box::new(right));
        }
        Ok(left)
    }

    fn factor(&mut self) -> Parsed<Expr> {
        for op in ["+", "-", "~"] {
            if self.eat_op(op) {
                return self.nested(|p| Ok(Expr::Unary(op, Box::new(p.factor()?))));
            }
        }
        let base = if self.eat_keyword("await") {
            Expr::Await(Box::new(self.primary()?))
        } else {
            self.primary()?
        };
        if self.eat_op("**") {
            let exponent = self.nested(|p| p.factor())?;
            return Ok(Expr::Binary(Box::new(base), "**", Box::new(exponent)));
        }
        Ok(base)
    }

    fn primary(&mut self) -> Parsed<Expr> {
        let mut e = self.atom()?;
        loop {
            if self.eat_op(".") {
                e = Expr::Attribute(Box::new(e), self.name()?);
            } else if self.eat_op("(") {
                let (args, keywords) = self.nested(|p| p.call_arguments(true))?;
                e = Expr::Call(Box::new(e), args, keywords);
            } else if self.eat_op("[") {
                let index = self.nested(|p| p.slices())?;
                e = Expr::Subscript(Box::new(e), Box::new(index));
            } else {
                return Ok(e);
            }
        }
    }

    /// Call arguments after `(`, through `)`: positional (and `*x`) then keywords (and `**x`).
    /// A bare generator argument (`f(x for x in y)`) is valid in calls, not in class bases.
    pub fn call_arguments(&mut self, generators: bool) -> Parsed<(Vec<Expr>, Vec<Keyword>)> {
        let mut args = Vec::new();
        let mut keywords = Vec::new();
        let mut seen_double_star = false;
        while !self.eat_op(")") {
            if self.eat_op("*") {
                if seen_double_star {
                    return Err(Fail::Syntax);
                }
                let value = self.or_raw(&[], |p| p.expression())?;
                args.push(Expr::Starred(Box::new(value)));
            } else if self.eat_op("**") {
                seen_double_star = true;
                keywords.push((None, self.or_raw(&[], |p| p.expression())?));
            } else if self.kind(self.pos) == Some(Kind::Name) && self.op_at(1, "=") {
                let name = self.name()?;
                self.pos += 1;
                keywords.push((Some(name), self.or_raw(&[], |p| p.expression())?));
            } else {
                if !keywords.is_empty() {
                    return Err(Fail::Syntax);
                }
                args.push(self.or_raw(&[], |p| {
                    let e = p.named_expression()?;
                    if p.at_keyword("for") || p.at_keyword("async") {
                        return Err(if generators {
                            Fail::Unsupported
                        } else {
                            Fail::Syntax
                        });
                    }
                    Ok(e)
                })?);
            }
            if !self.eat_op(",") {
                self.expect_op(")")?;
                break;
            }
        }
        Ok((args, keywords))
    }

    /// A subscript after `[`, through `]`.
    fn slices(&mut self) -> Parsed<Expr> {
        let mut items = Vec::new();
        let mut trailing_comma = false;
        while !self.at_op("]") {
            items.push(self.slice()?);
            trailing_comma = self.eat_op(",");
            if !trailing_comma {
                break;
            }
        }
        self.expect_op("]")?;
        match items.len() {
            0 => Err(Fail::Syntax),
            // `a[*b]` is a one-element tuple.
            1 if !trailing_comma && !matches!(items[0], Expr::Starred(_)) => Ok(items.remove(0)),
            _ => Ok(Expr::Tuple(items)),
        }
    }

    fn slice(&mut self) -> Parsed<Expr> {
        if self.at_op("*") {
            return self.star_named_expression();
        }
        let bound = |p: &mut Self| -> Parsed<Option<Box<Expr>>> {
            if p.at_op(":") || p.at_op("]") || p.at_op(",") {
                Ok(None)
            } else {
                Ok(Some(Box::new(p.expression()?)))
            }
        };
        let lower = bound(self)?;
        if !self.eat_op(":") {
            return match lower {
                Some(e) if !self.at_op(":=") => Ok(*e),
                Some(_) => Err(Fail::Unsupported),
                None => Err(Fail::Syntax),
            };
        }
        let upper = bound(self)?;
        let step = if self.eat_op(":") { bound(self)? } else { None };
        Ok(Expr::Slice(lower, upper, step))
    }

    /// Comma-separated starred expressions up to `close` (consumed); comprehensions are not
    /// modelled. Returns the items and whether a comma was seen.
    fn sequence(&mut self, first: Option<Expr>, close: &str) -> Parsed<(Vec<Expr>, bool)> {
        let mut items: Vec<Expr> = first.into_iter().collect();
        let mut comma = false;
        if !items.is_empty() {
            if self.at_keyword("for") || self.at_keyword("async") {
                return Err(Fail::Unsupported);
            }
            comma = self.eat_op(",");
            if !comma {
                self.expect_op(close)?;
                return Ok((items, false));
            }
        }
        while !self.eat_op(close) {
            items.push(self.star_named_expression()?);
            if self.at_keyword("for") || self.at_keyword("async") {
                return Err(Fail::Unsupported);
            }
            if !self.eat_op(",") {
                self.expect_op(close)?;
                break;
            }
            comma = true;
        }
        Ok((items, comma))
    }

    fn atom(&mut self) -> Parsed<Expr> {
        let at = self.pos;
        let text = self.text(at);
        match self.kind(at) {
            Some(Kind::Name) => {
                let constant = match text {
                    "True" => Some(Const::True),
                    "False" => Some(Const::False),
                    "None" => Some(Const::None),
                    _ => None,
                };
                if let Some(c) = constant {
                    self.pos += 1;
                    return Ok(Expr::Const(c));
                }
                Ok(Expr::Name(self.name()?))
            }
            Some(Kind::Number) => {
                self.pos += 1;
                Ok(Expr::Const(number(text)?))
            }
            Some(Kind::String) => {
                let end = self.toks[at..]
                    .iter()
                    .position(|t| t.kind != Kind::String)
                    .map_or(self.toks.len(), |n| at + n);
                self.pos = end;
                let parts: Vec<&str> = (at..end).map(|i| self.text(i)).collect();
                match strings(&parts) {
                    Ok(c) => Ok(Expr::Const(c)),
                    // An f-string or a `\N{...}` escape: an operand like any other, printed as
                    // written.
                    Err(Fail::Unsupported) => Ok(Expr::Raw(
                        crate::corpus::text::collapse_whitespace(&parts.join(" ")),
                    )),
                    Err(Fail::Syntax) => Err(Fail::Syntax),
                }
            }
            Some(Kind::Op) => {
                self.pos += 1;
                match text {
                    "..." => Ok(Expr::Const(Const::Ellipsis)),
                    "(" => self.nested(|p| p.parenthesised()),
                    "[" => self.nested(|p| Ok(Expr::List(p.sequence(None, "]")?.0))),
                    "{" => self.nested(|p| p.braces()),
                    _ => Err(Fail::Syntax),
                }
            }
            _ => Err(Fail::Syntax),
        }
    }

    /// After `(`: the empty tuple, a group, a tuple; generators and `yield` are not modelled.
    fn parenthesised(&mut self) -> Parsed<Expr> {
        if self.eat_op(")") {
            return Ok(Expr::Tuple(Vec::new()));
        }
        if self.at_keyword("yield") {
            return Err(Fail::Unsupported);
        }
        let first = self.star_named_expression()?;
        let (mut items, comma) = self.sequence(Some(first), ")")?;
        if comma {
            return Ok(Expr::Tuple(items));
        }
        match items.pop() {
            Some(Expr::Starred(_)) | None => Err(Fail::Syntax),
            Some(e) => Ok(e),
        }
    }

    /// After `{`: a dict or a set. The first item is parsed once, as a set element; a `:` after
    /// it makes it the dict's first key (parsing it again for the answer doubled the work at each
    /// level of `{{{...}}}`).
    fn braces(&mut self) -> Parsed<Expr> {
        if self.eat_op("}") {
            return Ok(Expr::Dict(Vec::new()));
        }
        let mut first_key = None;
        if !self.at_op("**") {
            let (save, starred) = (self.pos, self.at_op("*"));
            let first = self.star_named_expression()?;
            if !self.at_op(":") {
                return Ok(Expr::Set(self.sequence(Some(first), "}")?.0));
            }
            if starred {
                // `{*x: 1}`: a key cannot be starred; the key's own parse gives the error.
                self.pos = save;
            } else {
                // Not starred: `expression` then no `:=`, the key's parse exactly.
                first_key = Some(first);
            }
        }
        let mut items = Vec::new();
        while !self.eat_op("}") {
            if self.eat_op("**") {
                items.push((None, self.binary(0)?));
            } else {
                let key = match first_key.take() {
                    Some(key) => key,
                    None => self.expression()?,
                };
                self.expect_op(":")?;
                items.push((Some(key), self.expression()?));
            }
            if self.at_keyword("for") || self.at_keyword("async") {
                return Err(Fail::Unsupported);
            }
            if !self.eat_op(",") {
                self.expect_op("}")?;
                break;
            }
        }
        Ok(Expr::Dict(items))
    }

    /// A parameter list up to (not including) `close` (`)` for `def`, `:` for `lambda`), with the
    /// parser's rules: `/` after at least one parameter and before `*`, a bare `*` followed by a
    /// keyword-only parameter, `**name` last, no default-less parameter after a defaulted one.
    pub fn parameters(&mut self, close: &str, annotations: bool) -> Parsed<Params> {
        let mut params = Params::default();
        let mut seen_star = false;
        while !self.at_op(close) {
            if params.var_keyword.is_some() {
                return Err(Fail::Syntax);
            }
            if self.eat_op("/") {
                if seen_star || params.positional.is_empty() || !params.positional_only.is_empty() {
                    return Err(Fail::Syntax);
                }
                params.positional_only = std::mem::take(&mut params.positional);
            } else if self.eat_op("*") {
                if seen_star {
                    return Err(Fail::Syntax);
                }
                seen_star = true;
                if self.kind(self.pos) == Some(Kind::Name) {
                    params.var_positional = Some(self.parameter(annotations, true, false)?);
                } else if !self.at_op(",")
                    || self.op_at(1, close)
                    || self.op_at(1, "**")
                    || self.op_at(1, ")")
                {
                    return Err(Fail::Syntax);
                }
            } else if self.eat_op("**") {
                params.var_keyword = Some(self.parameter(annotations, false, false)?);
            } else {
                let param = self.parameter(annotations, false, true)?;
                if seen_star {
                    params.keyword_only.push(param);
                } else {
                    let previous_default = params
                        .positional
                        .last()
                        .or(params.positional_only.last())
                        .is_some_and(|p| p.default.is_some());
                    if previous_default && param.default.is_none() {
                        return Err(Fail::Syntax);
                    }
                    params.positional.push(param);
                }
            }
            if !self.eat_op(",") {
                break;
            }
        }
        if !self.at_op(close) {
            return Err(Fail::Syntax);
        }
        Ok(params)
    }

    fn parameter(&mut self, annotations: bool, starred: bool, default: bool) -> Parsed<Param> {
        let name = self.name()?;
        let annotation = if annotations && self.eat_op(":") {
            Some(self.or_raw(&["="], |p| {
                Ok(if starred && p.eat_op("*") {
                    Expr::Starred(Box::new(p.expression()?))
                } else {
                    p.expression()?
                })
            })?)
        } else {
            None
        };
        let default = if default && self.eat_op("=") {
            Some(self.or_raw(&[], |p| p.expression())?)
        } else {
            None
        };
        Ok(Param {
            name,
            annotation,
            default,
        })
    }
}

/// The value of a number token.
fn number(text: &str) -> Parsed<Const> {
    let digits: String = text.chars().filter(|&c| c != '_').collect();
    let lower = digits.to_ascii_lowercase();
    if let Some(imaginary) = lower.strip_suffix('j') {
        return Ok(Const::Imaginary(
            imaginary.parse().map_err(|_| Fail::Syntax)?,
        ));
    }
    let radix = match lower.get(..2) {
        Some("0x") => 16,
        Some("0o") => 8,
        Some("0b") => 2,
        _ => 10,
    };
    if radix == 10 && lower.contains(['.', 'e']) {
        return Ok(Const::Float(lower.parse().map_err(|_| Fail::Syntax)?));
    }
    if radix == 10 {
        let trimmed = lower.trim_start_matches('0');
        if trimmed.len() > INT_MAX_STR_DIGITS {
            return Err(Fail::Syntax);
        }
        let value = if trimmed.is_empty() { "0" } else { trimmed };
        return Ok(Const::Int(Some(value.to_owned())));
    }
    Ok(Const::Int(to_decimal(&lower[2..], radix)))
}

/// `digits` in `radix` as decimal digits, `None` past [`INT_MAX_STR_DIGITS`].
fn to_decimal(digits: &str, radix: u32) -> Option<String> {
    const LIMB: u64 = 1_000_000_000;
    let bits_per_digit = radix.trailing_zeros() as usize;
    // log10(2) < 0.30103: a bound on the decimal length, checked before any arithmetic.
    if digits.trim_start_matches('0').len() * bits_per_digit * 30103 / 100_000 > INT_MAX_STR_DIGITS
    {
        return None;
    }
    // Little-endian base-10^9 limbs.
    let mut limbs: Vec<u64> = vec![0];
    for d in digits.chars() {
        let mut carry = u64::from(d.to_digit(radix)?);
        for limb in limbs.iter_mut() {
            let v = *limb * u64::from(radix) + carry;
            *limb = v % LIMB;
            carry = v / LIMB;
        }
        if carry > 0 {
            limbs.push(carry);
        }
    }
    let mut out = limbs.last().map(u64::to_string).unwrap_or_default();
    for limb in limbs.iter().rev().skip(1) {
        out.push_str(&format!("{limb:09}"));
    }
    (out.len() <= INT_MAX_STR_DIGITS).then_some(out)
}

/// A string literal's prefix letters.
#[derive(Clone, Copy, Default)]
pub struct Prefix {
    pub raw: bool,
    pub bytes: bool,
    pub formatted: bool,
}

/// A string token's prefix and its body between the quotes.
pub fn split_literal(token: &str) -> (Prefix, &str) {
    let quote_at = token.find(['\'', '"']).unwrap_or(0);
    let mut prefix = Prefix::default();
    for letter in token[..quote_at].bytes() {
        match letter.to_ascii_lowercase() {
            b'r' => prefix.raw = true,
            b'b' => prefix.bytes = true,
            b'f' => prefix.formatted = true,
            _ => {}
        }
    }
    let rest = &token[quote_at..];
    let quote_len = if rest.starts_with("\'\'\'") || rest.starts_with("\"\"\"") {
        3
    } else {
        1
    };
    let body = rest
        .get(quote_len..rest.len().saturating_sub(quote_len))
        .unwrap_or("");
    (prefix, body)
}

/// The constant a run of adjacent string tokens makes (implicit concatenation).
pub fn strings(parts: &[&str]) -> Parsed<Const> {
    let mut text = String::new();
    let mut bytes = Vec::new();
    let mut kinds = (false, false);
    let mut u_prefix = false;
    // Set by f-strings and `\N{...}`: the escapes are still checked, the value is not kept.
    let mut unmodelled = false;
    for (i, part) in parts.iter().enumerate() {
        let (prefix, body) = split_literal(part);
        let raw = prefix.raw;
        if prefix.formatted {
            kinds.1 = true;
            unescape(body, raw, false, &mut unmodelled)?;
            unmodelled = true;
            continue;
        }
        if i == 0 {
            // Only a lower-case `u` sets `Constant.kind`.
            u_prefix = part.starts_with('u');
        }
        if prefix.bytes {
            kinds.0 = true;
            let value = unescape(body, raw, true, &mut unmodelled)?;
            bytes.extend(value.into_iter().map(|c| c as u8));
        } else if !body.contains('\\') {
            kinds.1 = true;
            text.push_str(body);
        } else {
            kinds.1 = true;
            for c in unescape(body, raw, false, &mut unmodelled)? {
                match char::from_u32(c) {
                    Some(c) => text.push(c),
                    None => unmodelled = true,
                }
            }
        }
    }
    match kinds {
        (true, true) => Err(Fail::Syntax),
        _ if unmodelled => Err(Fail::Unsupported),
        (true, false) => Ok(Const::Bytes(bytes)),
        _ => Ok(Const::Str {
            value: text,
            u_prefix,
        }),
    }
}

/// Whether CPython accepts a run of adjacent string tokens: valid escapes, ASCII-only bytes, no
/// mix of bytes and text. Cheaper than [`strings`]: bodies without a backslash are not decoded.
pub fn strings_are_valid(parts: &[&str]) -> bool {
    let mut kinds = (false, false);
    let mut unmodelled = false;
    for part in parts {
        let (prefix, body) = split_literal(part);
        let bytes = prefix.bytes;
        if bytes {
            kinds.0 = true;
        } else {
            kinds.1 = true;
        }
        let plain = !body.contains('\\') && (!bytes || body.is_ascii());
        if !plain && unescape(body, prefix.raw, bytes, &mut unmodelled).is_err() {
            return false;
        }
    }
    kinds != (true, true)
}

/// A literal body's code points (bytes for `bytes` literals) with escapes resolved; `Syntax` for
/// an escape CPython rejects. A `\N{name}` escape (its name cannot be looked up without Unicode's
/// name table) sets `unmodelled` and is left out.
fn unescape(body: &str, raw: bool, bytes: bool, unmodelled: &mut bool) -> Parsed<Vec<u32>> {
    let mut out = Vec::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if bytes && !c.is_ascii() {
            return Err(Fail::Syntax);
        }
        if c != '\\' || raw {
            out.push(c as u32);
            if c == '\\' {
                // A raw literal keeps the backslash and the character it protects.
                if let Some(next) = chars.next() {
                    out.push(next as u32);
                }
            }
            continue;
        }
        let Some(e) = chars.next() else {
            return Err(Fail::Syntax);
        };
        let hex = |chars: &mut std::iter::Peekable<std::str::Chars>, n: usize| -> Parsed<u32> {
            let mut v = 0u32;
            for _ in 0..n {
                let d = chars
                    .next()
                    .and_then(|c| c.to_digit(16))
                    .ok_or(Fail::Syntax)?;
                v = v * 16 + d;
            }
            Ok(v)
        };
        match e {
            '\n' => {}
            '\r' => {
                chars.next_if_eq(&'\n');
            }
            '\\' | '\'' | '"' => out.push(e as u32),
            'a' => out.push(7),
            'b' => out.push(8),
            'f' => out.push(12),
            'n' => out.push(10),
            'r' => out.push(13),
            't' => out.push(9),
            'v' => out.push(11),
            '0'..='7' => {
                let mut v = e as u32 - '0' as u32;
                for _ in 0..2 {
                    match chars.peek().and_then(|c| c.to_digit(8)) {
                        Some(d) => {
                            v = v * 8 + d;
                            chars.next();
                        }
                        None => break,
                    }
                }
                out.push(if bytes { v & 0xFF } else { v });
            }
            'x' => out.push(hex(&mut chars, 2)?),
            'u' if !bytes => out.push(hex(&mut chars, 4)?),
            'U' if !bytes => {
                let v = hex(&mut chars, 8)?;
                if v > 0x10FFFF {
                    return Err(Fail::Syntax);
                }
                out.push(v);
            }
            'N' if !bytes => {
                if chars.next() != Some('{') {
                    return Err(Fail::Syntax);
                }
                let mut name_len = 0;
                loop {
                    match chars.next() {
                        None => return Err(Fail::Syntax),
                        Some('}') if name_len > 0 => break,
                        Some('}') => return Err(Fail::Syntax),
                        Some(_) => name_len += 1,
                    }
                }
                *unmodelled = true;
            }
            other => {
                out.push('\\' as u32);
                out.push(other as u32);
            }
        }
    }
    Ok(out)
}

/// Marks a value whose `repr` CPython refuses (an integer past [`INT_MAX_STR_DIGITS`]).
#[derive(Debug)]
pub struct TooLarge;

type Printed = Result<(), TooLarge>;

/// `repr()` of a float as `ast.unparse` writes it: infinities as `1e309`.
fn write_float(f: f64, out: &mut String) {
    if f.is_infinite() {
        out.push_str("1e309");
    } else {
        write_python_float(f, out);
    }
}

/// `repr()` of bytes.
fn write_bytes(bytes: &[u8], out: &mut String) {
    let quote = if bytes.contains(&b'\'') && !bytes.contains(&b'"') {
        b'"'
    } else {
        b'\''
    };
    out.push('b');
    out.push(quote as char);
    for &b in bytes {
        match b {
            b'\\' => out.push_str("\\\\"),
            b'\t' => out.push_str("\\t"),
            b'\n' => out.push_str("\\n"),
            b'\r' => out.push_str("\\r"),
            _ if b == quote => {
                out.push('\\');
                out.push(b as char);
            }
            0x20..=0x7E => out.push(b as char),
            _ => out.push_str(&format!("\\x{b:02x}")),
        }
    }
    out.push(quote as char);
}

fn write_const(c: &Const, out: &mut String) -> Printed {
    match c {
        Const::Int(Some(digits)) => out.push_str(digits),
        Const::Int(None) => return Err(TooLarge),
        Const::Float(f) => write_float(*f, out),
        Const::Imaginary(f) => {
            let mut text = String::new();
            write_float(*f, &mut text);
            // complex repr prints the imaginary part without a forced `.0`.
            out.push_str(text.strip_suffix(".0").unwrap_or(&text));
            out.push('j');
        }
        Const::Str { value, u_prefix } => {
            if *u_prefix {
                out.push('u');
            }
            out.push_str(&agentteams_mcp::jsonrpc::py_repr(&Value::from(
                value.as_str(),
            )));
        }
        Const::Bytes(b) => write_bytes(b, out),
        Const::True => out.push_str("True"),
        Const::False => out.push_str("False"),
        Const::None => out.push_str("None"),
        Const::Ellipsis => out.push_str("..."),
    }
    Ok(())
}

/// Items separated by `, `, a single item followed by `,` (`items_view`).
fn write_items(items: &[Expr], out: &mut String) -> Printed {
    if let [only] = items {
        unparse(only, prec::TEST, out)?;
        out.push(',');
        return Ok(());
    }
    write_joined(items, out)
}

fn write_joined(items: &[Expr], out: &mut String) -> Printed {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        unparse(item, prec::TEST, out)?;
    }
    Ok(())
}

/// Writes `e` as `ast.unparse(e)` does.
pub fn unparse_alone(e: &Expr, out: &mut String) -> Printed {
    unparse(e, prec::TEST, out)
}

/// Writes `e` as `ast.unparse` does when the surrounding node gave it precedence `level`.
fn unparse(e: &Expr, level: u8, out: &mut String) -> Printed {
    let open = |needed: bool, out: &mut String| {
        if needed {
            out.push('(');
        }
        needed
    };
    let close = |opened: bool, out: &mut String| {
        if opened {
            out.push(')');
        }
    };
    match e {
        Expr::Name(n) => out.push_str(n),
        Expr::Const(c) => write_const(c, out)?,
        Expr::Attribute(value, attr) => {
            unparse(value, prec::ATOM, out)?;
            // `1 .real`: CPython checks isinstance(value, int), which bools pass too.
            if matches!(
                **value,
                Expr::Const(Const::Int(_) | Const::True | Const::False)
            ) {
                out.push(' ');
            }
            out.push('.');
            out.push_str(attr);
        }
        Expr::Call(func, args, keywords) => {
            unparse(func, prec::ATOM, out)?;
            out.push('(');
            write_joined(args, out)?;
            for (i, (name, value)) in keywords.iter().enumerate() {
                if i > 0 || !args.is_empty() {
                    out.push_str(", ");
                }
                match name {
                    Some(n) => {
                        out.push_str(n);
                        out.push('=');
                    }
                    None => out.push_str("**"),
                }
                unparse(value, prec::TEST, out)?;
            }
            out.push(')');
        }
        Expr::Subscript(value, index) => {
            unparse(value, prec::ATOM, out)?;
            out.push('[');
            match &**index {
                Expr::Tuple(items) if !items.is_empty() => write_items(items, out)?,
                other => unparse(other, prec::TEST, out)?,
            }
            out.push(']');
        }
        Expr::Slice(lower, upper, step) => {
            if let Some(l) = lower {
                unparse(l, prec::TEST, out)?;
            }
            out.push(':');
            if let Some(u) = upper {
                unparse(u, prec::TEST, out)?;
            }
            if let Some(s) = step {
                out.push(':');
                unparse(s, prec::TEST, out)?;
            }
        }
        Expr::Tuple(items) => {
            let opened = open(items.is_empty() || level > prec::TUPLE, out);
            write_items(items, out)?;
            close(opened, out);
        }
        Expr::List(items) => {
            out.push('[');
            write_joined(items, out)?;
            out.push(']');
        }
        Expr::Set(items) if items.is_empty() => out.push_str("{*()}"),
        Expr::Set(items) => {
            out.push('{');
            write_joined(items, out)?;
            out.push('}');
        }
        Expr::Dict(items) => {
            out.push('{');
            for (i, (key, value)) in items.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                match key {
                    Some(k) => {
                        unparse(k, prec::TEST, out)?;
                        out.push_str(": ");
                        unparse(value, prec::TEST, out)?;
                    }
                    None => {
                        out.push_str("**");
                        unparse(value, prec::EXPR, out)?;
                    }
                }
            }
            out.push('}');
        }
        Expr::Starred(value) => {
            out.push('*');
            unparse(value, prec::EXPR, out)?;
        }
        Expr::Unary(op, operand) => {
            let own = if *op == "not" {
                prec::NOT
            } else {
                prec::FACTOR
            };
            let opened = open(level > own, out);
            out.push_str(op);
            if own != prec::FACTOR {
                out.push(' ');
            }
            unparse(operand, own, out)?;
            close(opened, out);
        }
        Expr::Binary(left, op, right) => {
            let own = binary_precedence(op);
            let opened = open(level > own, out);
            let (l, r) = if *op == "**" {
                (prec::next(own), own)
            } else {
                (own, prec::next(own))
            };
            unparse(left, l, out)?;
            out.push(' ');
            out.push_str(op);
            out.push(' ');
            unparse(right, r, out)?;
            close(opened, out);
        }
        Expr::Bool(op, values) => {
            let own = if *op == "and" { prec::AND } else { prec::OR };
            let opened = open(level > own, out);
            // ast.unparse raises the level by one for each successive operand.
            let mut operand_level = own;
            for (i, value) in values.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                    out.push_str(op);
                    out.push(' ');
                }
                operand_level = prec::next(operand_level);
                unparse(value, operand_level, out)?;
            }
            close(opened, out);
        }
        Expr::Compare(left, rest) => {
            let opened = open(level > prec::CMP, out);
            unparse(left, prec::next(prec::CMP), out)?;
            for (op, right) in rest {
                out.push(' ');
                out.push_str(op);
                out.push(' ');
                unparse(right, prec::next(prec::CMP), out)?;
            }
            close(opened, out);
        }
        Expr::IfElse(body, test, orelse) => {
            let opened = open(level > prec::TEST, out);
            unparse(body, prec::next(prec::TEST), out)?;
            out.push_str(" if ");
            unparse(test, prec::next(prec::TEST), out)?;
            out.push_str(" else ");
            unparse(orelse, prec::TEST, out)?;
            close(opened, out);
        }
        Expr::Lambda(params, body) => {
            let opened = open(level > prec::TEST, out);
            out.push_str("lambda");
            let mut args = String::new();
            write_params(params, &mut args)?;
            if !args.is_empty() {
                out.push(' ');
                out.push_str(&args);
            }
            out.push_str(": ");
            unparse(body, prec::TEST, out)?;
            close(opened, out);
        }
        Expr::Raw(text) => out.push_str(text),
        Expr::Await(value) => {
            let opened = open(level > prec::AWAIT, out);
            out.push_str("await ");
            unparse(value, prec::ATOM, out)?;
            close(opened, out);
        }
    }
    Ok(())
}

fn write_param(p: &Param, out: &mut String) -> Printed {
    out.push_str(&p.name);
    if let Some(a) = &p.annotation {
        out.push_str(": ");
        unparse(a, prec::TEST, out)?;
    }
    if let Some(d) = &p.default {
        out.push('=');
        unparse(d, prec::TEST, out)?;
    }
    Ok(())
}

/// A parameter list as `ast.unparse(node.args)` writes it (`visit_arguments`).
pub fn write_params(p: &Params, out: &mut String) -> Printed {
    let mut first = true;
    let mut separator = |out: &mut String| {
        if !std::mem::take(&mut first) {
            out.push_str(", ");
        }
    };
    let positional_only = p.positional_only.len();
    for (i, param) in p.positional_only.iter().chain(&p.positional).enumerate() {
        separator(out);
        write_param(param, out)?;
        if i + 1 == positional_only {
            out.push_str(", /");
        }
    }
    if p.var_positional.is_some() || !p.keyword_only.is_empty() {
        separator(out);
        out.push('*');
        if let Some(v) = &p.var_positional {
            write_param(v, out)?;
        }
    }
    for param in &p.keyword_only {
        out.push_str(", ");
        write_param(param, out)?;
    }
    if let Some(k) = &p.var_keyword {
        separator(out);
        out.push_str("**");
        write_param(k, out)?;
    }
    Ok(())
}
