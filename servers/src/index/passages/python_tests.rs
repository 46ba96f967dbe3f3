//! Tests of the Python path of [`super::passages`] (`python.rs`, with `pyexpr.rs` and
//! `pytoken.rs` under it), through the passages entry point, so they hold whichever module does
//! the work; beside the modules they test rather than inside `python.rs`, which the entry point
//! calls.

use super::{generic, passages, MAX_PASSAGES, PASSAGE_CHARS};
use crate::corpus::text::cut_chars;

fn python(src: &str) -> Vec<String> {
    passages(src, Some("python"))
}

/// (header, what the reference writes for it): printed by CPython 3.11's `ast.unparse` through
/// the reference's `_extract_passages`, pinned here.
#[test]
fn headers_print_as_ast_unparse_does() {
    let table: &[(&str, &str)] = &[
        ("def f(x=0x10, y=0o17, z=0b101, w=1_000_000, big=0xFFFFFFFFFFFFFFFFFFFF)", "def f(x=16, y=15, z=5, w=1000000, big=1208925819614629174706175)"),
        ("def f(a=1.5, b=1., c=.5, d=1e10, e=1e16, f=1E-5, g=1e999, h=2.5e-300, i=0.1)", "def f(a=1.5, b=1.0, c=0.5, d=10000000000.0, e=1e+16, f=1e-05, g=1e309, h=2.5e-300, i=0.1)"),
        ("def f(a=3j, b=1.5J, c=1e16j, d=0j, e=1e999j)", "def f(a=3j, b=1.5j, c=1e+16j, d=0j, e=1e309j)"),
        ("def f(a=\"s\", b='it\\'s', c=\"say \\\"hi\\\"\", d='both \\' and \"', e=r'\\d+', f=u'x', g=U'x', h='\\x00\\t\\n\\u00e9\\U0001F600')", "def f(a='s', b=\"it's\", c='say \"hi\"', d='both \\' and \"', e='\\\\d+', f=u'x', g='x', h='\\x00\\t\\né😀')"),
        ("def f(a=b'x', b=B\"it's\", c=rb'\\x', d=b'\\x00\\xff\\t', e='a' 'b', f=u'a' \"b\")", "def f(a=b'x', b=b\"it's\", c=b'\\\\x', d=b'\\x00\\xff\\t', e='ab', f=u'ab')"),
        ("def f(a: int = 1, *args: str, b, c: 'C' = None, **kw: dict) -> bool", "def f(a: int=1, *args: str, b, c: 'C'=None, **kw: dict)"),
        ("def f(a, b, /, c, *, d=1, e)", "def f(a, b, /, c, *, d=1, e)"),
        ("def f(a=1, /, b=2, *, c)", "def f(a=1, /, b=2, *, c)"),
        ("def f(*, a)", "def f(*, a)"),
        ("def f(*a, **k,)", "def f(*a, **k)"),
        ("def f(a = - 1, b = +x, c = ~x, d = not x, e = -(-1), f = -x ** 2, g = (-x) ** 2, h = 2 ** -1)", "def f(a=-1, b=+x, c=~x, d=not x, e=--1, f=-x ** 2, g=(-x) ** 2, h=2 ** (-1))"),
        ("def f(a=x + y * z, b=(x + y) * z, c=x - (y - z), d=x ** y ** z, e=(x ** y) ** z, f=x // y % z @ w)", "def f(a=x + y * z, b=(x + y) * z, c=x - (y - z), d=x ** y ** z, e=(x ** y) ** z, f=x // y % z @ w)"),
        ("def f(a=x | y ^ z & w, b=(x | y) & z, c=x << 1 >> 2, d=(a < b) < c, e=a < b == c, f=a is not b, g=a not in b)", "def f(a=x | y ^ z & w, b=(x | y) & z, c=x << 1 >> 2, d=(a < b) < c, e=a < b == c, f=a is not b, g=a not in b)"),
        ("def f(a=x and y or z, b=x and (y or z), c=(x or y) and z, d=not (x and y), e=x or y or z, f=a or (b and c) or d)", "def f(a=x and y or z, b=x and (y or z), c=(x or y) and z, d=not (x and y), e=x or y or z, f=a or (b and c) or d)"),
        ("def f(a=x if y else z, b=(x if y else z) if w else v, c=lambda: 0, d=lambda x, *a, k=1, **kw: x, e=(lambda: 1)())", "def f(a=x if y else z, b=(x if y else z) if w else v, c=lambda: 0, d=lambda x, *a, k=1, **kw: x, e=(lambda: 1)())"),
        ("def f(a=[], b=[1, *x], c={}, d={1: 2, **e}, e={1, 2}, f=(), g=(1,), h=(1, 2), i=set())", "def f(a=[], b=[1, *x], c={}, d={1: 2, **e}, e={1, 2}, f=(), g=(1,), h=(1, 2), i=set())"),
        ("def f(a=x.y.z, b=x[1], c=x[1:2], d=x[::2], e=x[1, 2], f=x[(1, 2)], g=x[a:b, c], h=x[()], i=f(1, *a, k=2, **kw), j=f(k=1, *a))", "def f(a=x.y.z, b=x[1], c=x[1:2], d=x[::2], e=x[1, 2], f=x[1, 2], g=x[a:b, c], h=x[()], i=f(1, *a, k=2, **kw), j=f(*a, k=1))"),
        ("def f(a=1 .real, b=(1).real, c=1.5.real, d=True.real, e='s'.join, f=(-1).real, g=(a + b).c, h=(await x), i=...)", "def f(a=1 .real, b=1 .real, c=1.5.real, d=True .real, e='s'.join, f=(-1).real, g=(a + b).c, h=await x, i=...)"),
        ("def f(a: typing.Callable[[], typing.Awaitable] = None, b: dict[str, list[int]] = {}, c: 'A | B' = (1, 2))", "def f(a: typing.Callable[[], typing.Awaitable]=None, b: dict[str, list[int]]={}, c: 'A | B'=(1, 2))"),
        ("def f(a: (int) = (1), b: (yield) = 2)", "def f(a: int=1, b: (yield)=2)"),
        ("def f(self, x=(1,\n         2),  # comment\n      y=\\\n  3, z=\"\"\"multi\nline\"\"\")", "def f(self, x=(1, 2), y=3, z='multi\\nline')"),
        ("async def run(*, loop: events.AbstractEventLoop=None)", "async def run(*, loop: events.AbstractEventLoop=None)"),
        ("def f(a=x[1:2, ::3], b=x[*y], c=x[*y, z], d=f(*a, *b), e={**a, 'b': 1}, f=[*a, *b])", "def f(a=x[1:2, ::3], b=x[*y,], c=x[*y, z], d=f(*a, *b), e={**a, 'b': 1}, f=[*a, *b])"),
        ("def f(a=-1e309, b=1e309, c=-0.0, d=0.0, e=1e-05, f=123456789.123456789, g=1e22, h=1e21)", "def f(a=-1e309, b=1e309, c=-0.0, d=0.0, e=1e-05, f=123456789.12345679, g=1e+22, h=1e+21)"),
        ("class A", "class A"),
        ("class A()", "class A"),
        ("class A(B, C)", "class A(B, C)"),
        ("class A(metaclass=M)", "class A"),
        ("class A(B, metaclass=abc.ABCMeta, **kw)", "class A(B)"),
        ("class A(*bases, x)", "class A(*bases, x)"),
        ("class A(B[int], (C), D.E(1), F if x else G, lambda: 1)", "class A(B[int], C, D.E(1), F if x else G, lambda: 1)"),
        ("class A(1 .real, (x, y), [a])", "class A(1 .real, (x, y), [a])"),
    ];
    for (header, expected) in table {
        let src = format!("{header}:\n    pass\n");
        assert_eq!(python(&src), [*expected], "{header}");
    }
}

/// (module, the reference's passages), pinned from the reference run under CPython 3.11.
#[test]
fn modules_follow_the_reference() {
    let table: &[(&str, &[&str])] = &[
        (
            "import os\n\n@decorator\n@other.deco(1)\ndef batch_update(inputPath,\n        retries=3):  # comment\n    \"\"\"Update a\n    batch.\"\"\"\n    def nested(): pass\n    return 1\n\nclass Widget(Base, metaclass=M):\n    '''A widget.'''\n    def method(self): pass\n\nasync def go(): 'one-liner'\n",
            &["def batch_update(inputPath, retries=3) — Update a batch.", "class Widget(Base) — A widget.", "async def go() — one-liner"],
        ),
        (
            "def a():\n    'x' \"y\"\n\ndef b():\n    '\\u00b6 tab\\tnl\\n'\n\ndef c():\n    r'raw\\n'\n\ndef d():\n    f'no'\n\ndef e():\n    b'no'\n\ndef g():\n    x = 1\n    'no'\n\ndef h(): 'same line'; x = 1\n",
            &["def a() — xy", "def b() — ¶ tab nl", "def c() — raw\\n", "def d()", "def e()", "def g()", "def h() — same line"],
        ),
        (
            "def f():\n    \"\"\"\n\n    \"\"\"\n\ndef g():\n    \"   \"\n",
            &["def f() — ", "def g()"],
        ),
        (
            "def f(:\n    pass\n",
            &["def f(: pass"],
        ),
        (
            "print 'hello'\n\ndef f(): pass\n",
            &["print 'hello'", "def f(): pass"],
        ),
        (
            "x = 0777\n\ndef f(): pass\n",
            &["x = 0777", "def f(): pass"],
        ),
        (
            "def f():\nreturn 1\n",
            &["def f(): return 1"],
        ),
        (
            "  x = 1\ndef f(): pass\n",
            &["x = 1 def f(): pass"],
        ),
        (
            "def f(a=1, b): pass\n",
            &["def f(a=1, b): pass"],
        ),
        (
            "def f(*): pass\n",
            &["def f(*): pass"],
        ),
        (
            "def f(a, /, /): pass\n",
            &["def f(a, /, /): pass"],
        ),
        (
            "@decorator\nx = 1\n",
            &["@decorator x = 1"],
        ),
        (
            "def f(): pass\nclass C(x for x in y): pass\n",
            &["def f(): pass class C(x for x in y): pass"],
        ),
        (
            "s = '\\x4'\ndef f(): pass\n",
            &["s = '\\x4' def f(): pass"],
        ),
        (
            "s = b'\\xff' 'x'\ndef f(): pass\n",
            &["s = b'\\xff' 'x' def f(): pass"],
        ),
        (
            "def f(): pass\nx = (1,\n",
            &["def f(): pass x = (1,"],
        ),
        (
            "def f(): pass\n\u{0}\n",
            &["def f(): pass \u{0}"],
        ),
        (
            "﻿def f(): pass\n",
            &["﻿def f(): pass"],
        ),
        (
            "def f(): pass\nclass C:\n    def g(self x): pass\n",
            &["def f(): pass class C: def g(self x): pass"],
        ),
        (
            "def f(): pass\nx = y = \n",
            &["def f(): pass x = y ="],
        ),
        (
            "def f(): pass\nx = (= 1)\n",
            &["def f(): pass x = (= 1)"],
        ),
        (
            "def f(): pass\nreturn x if y else z; pass pass\n",
            &["def f(): pass return x if y else z; pass pass"],
        ),
        (
            "if x:\n    pass\n  else:\n    pass\ndef f(): pass\n",
            &["if x: pass else: pass def f(): pass"],
        ),
        (
            "match = 1\nmatch x:\n    case [a, b]:\n        pass\n    case _:\n        pass\n\ndef f(): pass\n",
            &["def f()"],
        ),
        (
            "def f(): return 1if x else 2\n",
            &["def f()"],
        ),
        (
            "x = [1,\n# comment\n  2]\ndef f(a=[1,\n    2]): pass\n",
            &["def f(a=[1, 2])"],
        ),
        (
            "def f(\\\n  a): pass\n",
            &["def f(a)"],
        ),
        (
            "class C: pass\nclass D(C): x = 1; y = 2\n",
            &["class C", "class D(C)"],
        ),
        (
            "def f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\ndef f(): pass\n",
            &["def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()", "def f()"],
        ),
        (
            "def f():\n    'word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word '\n",
            &["def f() — word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word word "],
        ),
        (
            "x = 1\ny = 2\n",
            &["x = 1 y = 2"],
        ),
        (
            "from ...pkg import x\nf = lambda a,: a\ng = lambda a, /: a\ns = x[:, ::2]\na, = b\ndef f(*, k, **kw): pass\n",
            &["def f(*, k, **kw)"],
        ),
        (
            "match x:\n    case *y, 2,:\n        pass\n    case {'k': v, **rest}:\n        pass\nfor f in lambda c: c, g:\n    pass\ndef f(): pass\n",
            &["def f()"],
        ),
        (
            "if x: if y: pass\ndef f(): pass\n",
            &["if x: if y: pass def f(): pass"],
        ),
        (
            "f() g\ndef f(): pass\n",
            &["f() g def f(): pass"],
        ),
        (
            "x not y\ndef f(): pass\n",
            &["x not y def f(): pass"],
        ),
        (
            "x.(y)\ndef f(): pass\n",
            &["x.(y) def f(): pass"],
        ),
        (
            "if a = 1:\n    pass\ndef f(): pass\n",
            &["if a = 1: pass def f(): pass"],
        ),
        (
            "class C: x = 1:\n    pass\ndef f(): pass\n",
            &["class C: x = 1: pass def f(): pass"],
        ),
        (
            "f(a, :b)\ndef f(): pass\n",
            &["f(a, :b) def f(): pass"],
        ),
        (
            "x = [1, 2]y\ndef f(): pass\n",
            &["x = [1, 2]y def f(): pass"],
        ),
    ];
    for (src, expected) in table {
        assert_eq!(python(src), *expected, "{src:?}");
    }
}

#[test]
fn unmodelled_literals_print_as_written() {
    // CPython prints '•' (it knows Unicode names) and re-quotes the f-string.
    assert_eq!(
        python("def f(a='\\N{BULLET}'.x, b=f\"x{y}\"): pass\n"),
        ["def f(a='\\N{BULLET}'.x, b=f\"x{y}\")"]
    );
    // A comprehension keeps its source text; the other arguments are still printed.
    assert_eq!(
        python("def f(a=[x  for x in y], b=0x10): pass\n"),
        ["def f(a=[x for x in y], b=16)"]
    );
    // A docstring with a \N{...} escape is kept as written.
    assert_eq!(
        python("def f():\n    '''A \\N{BULLET} b'''\n"),
        ["def f() \u{2014} A \\N{BULLET} b"]
    );
}

#[test]
fn expression_depth_is_bounded() {
    let depth = super::pyexpr::MAX_EXPR_DEPTH;
    // Deeper than the parser follows: printed as source, never a stack overflow.
    let minus = "-".repeat(50 * depth);
    let signature = format!("def f(a={minus}1)");
    assert_eq!(
        python(&format!("def f(a={minus}1): pass\n")),
        [cut_chars(&signature, PASSAGE_CHARS)]
    );
    let (open, close) = ("(".repeat(190), ")".repeat(190));
    assert_eq!(
        python(&format!("def f(a={open}1{close}): pass\n")),
        [format!("def f(a={open}1{close})")]
    );
    // Within the bound: printed as ast.unparse does.
    let minus = "-".repeat(depth - 5);
    assert_eq!(
        python(&format!("def f(a={minus}1): pass\n")),
        [format!("def f(a={minus}1)")]
    );
}

#[test]
fn nested_braces_print_as_ast_unparse_does() {
    // Pinned from CPython 3.11's ast.unparse.
    let table: &[(&str, &str)] = &[
        (
            "def f(a={{1: 2}: 3}, b={*x}, c={{*x}: {**y}})",
            "def f(a={{1: 2}: 3}, b={*x}, c={{*x}: {**y}})",
        ),
        (
            "def f(a={{{1}}}, b={{{1: 2}: 3}: {4: {5}}}, c={ (1) : {2,} , })",
            "def f(a={{{1}}}, b={{{1: 2}: 3}: {4: {5}}}, c={1: {2}})",
        ),
    ];
    for (header, expected) in table {
        let src = format!("{header}:\n    pass\n");
        assert_eq!(python(&src), [*expected], "{header}");
    }
    // `{*x: 1}` is a syntax error: generic passages.
    let starred_key = "def f(a={*x: 1}): pass\n";
    assert_eq!(python(starred_key), generic(starred_key));
    // As deep as the parser follows, each level's first item parsed once (parsing it again
    // to tell a dict from a set doubled the time per level).
    // Within the bound (each level is two steps of it) the printer renders them; past it
    // they are printed as written.
    let max = super::pyexpr::MAX_EXPR_DEPTH;
    for depth in [max / 2 - 5, max - 10] {
        let sets = format!("{}1{}", "{".repeat(depth), "}".repeat(depth));
        let dicts = format!("{}1{}", "{".repeat(depth), ": 2}".repeat(depth));
        let signature = format!("def f(a={sets}, b={dicts})");
        assert_eq!(
            python(&format!("{signature}: pass\n")),
            [cut_chars(&signature, PASSAGE_CHARS)]
        );
    }
}

#[test]
fn huge_integers_follow_cpython_limits() {
    let limit = super::pyexpr::INT_MAX_STR_DIGITS;
    // A decimal literal past the limit is a syntax error: generic passages.
    let long = format!("def f(a={}): pass\n", "1".repeat(limit + 1));
    assert_eq!(python(&long), generic(&long));
    let ones = "1".repeat(limit);
    let signature = format!("def f(a={ones})");
    assert_eq!(
        python(&format!("def f(a={ones}): pass\n")),
        [cut_chars(&signature, PASSAGE_CHARS)]
    );
    // A hex literal whose decimal form is too long: unparse raises ValueError and the
    // reference writes the name alone.
    let hex = format!("def f(a=0x{}): pass\n", "F".repeat(4000));
    assert_eq!(python(&hex), ["f"]);
}

/// Garbage, truncations and byte-level mutations of a header-rich module: never a panic,
/// never more than MAX_PASSAGES.
#[test]
fn any_input_is_handled() {
    let src = "@d(1)\nasync def f(a: int = 0x1F, *b: 'T', c=[1, {2: (3,)}], **d) -> None:\n    r'''Doc \\N{X} \\u00e9'''\nclass C(B, metaclass=M): \"x\" 'y'\nx = f'{a!r:>{w}}' + b'\\xff' \\\n    + 1e5j\n";
    for end in 0..=src.len() {
        if let Some(prefix) = src.get(..end) {
            assert!(python(prefix).len() <= MAX_PASSAGES);
        }
    }
    let mut next = crate::scratch::test_rng(0x9E37_79B9_7F4A_7C15);
    let alphabet = b"()[]{}:,;=*/@'\"\\#\n\t \rxfbru0123456789.-+<>!$`\x0c\x00";
    for _ in 0..3000 {
        let mut mutated = src.as_bytes().to_vec();
        for _ in 0..1 + next() % 4 {
            let at = next() % mutated.len();
            let byte = alphabet[next() % alphabet.len()];
            match next() % 3 {
                0 => mutated.insert(at, byte),
                1 => mutated[at] = byte,
                _ => {
                    mutated.remove(at);
                }
            }
        }
        let text = String::from_utf8_lossy(&mutated);
        assert!(python(&text).len() <= MAX_PASSAGES);
    }
    for garbage in [
        "(",
        ")",
        "def",
        "def f",
        "def f(",
        "class",
        "class C(",
        "@",
        "@\n",
        "async",
        "async def",
        "\\",
        "'''",
        "0x",
        "1e",
        "1_",
        "def f(*",
        "def f(**",
        "def f(a:",
        "def f(a=",
        "def f() ->",
        "class C(**",
        "lambda",
        "\u{2028}def f(): pass",
    ] {
        assert_eq!(python(garbage), generic(garbage), "{garbage:?}");
    }
}
