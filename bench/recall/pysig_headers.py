#!/usr/bin/env python3
"""Random def/class headers and docstrings (numbers, strings with every prefix and escape,
operators, lambdas, subscripts, decorators), some deliberately broken, one module per file, to
measure pysig_parity.py on header forms the standard library does not use.

usage: pysig_headers.py OUT SEED COUNT
"""
import random, sys, os, ast
R = random.Random(int(sys.argv[2]) if len(sys.argv) > 2 else 1)
NAMES = ['a', 'b', 'x', 'typing', 'np', 'Foo', '_x', 'é', 'ABC']
def num():
    return R.choice(['0', '1', '10', '0x1F', '0o17', '0b101', '1_000', '0xFFFF_FFFF_FFFF_FFFF_FFFF', '1.5', '1.', '.5', '1e10', '1e16', '1E-5', '2.5e-300', '1e999', '3j', '1.5J', '1e16j', '0j', '00', '0.0', '123456789012345678901234567890', '1e22', '0.1', '5e-324'])
def string():
    body = R.choice(['', 'abc', "it's", 'say "hi"', 'both \' and "', 'tab\\t', 'nl\\n', '\\x00', '\\u00e9', 'é', '\\\\', '\\101', '\\U0001F600', '\\q', 'a\\\nb', '\\x7f', '\\u200b', '\\xa0', '\\N{BULLET}'])
    pre = R.choice(['', '', 'r', 'u', 'b', 'R', 'U', 'B', 'br', 'Rb', 'f'])
    if pre.lower().startswith('b') or pre.lower() in ('br', 'rb'):
        body = body.replace('é', 'e')
    if 'r' in pre.lower() and body.endswith('\\') : body += 'x'
    q = R.choice(["'", '"', "'''", '"""'])
    if body.endswith(q[0]): body += ' '
    if len(q) == 1 and '\n' in body: body = body.replace('\n', ' ')
    s = pre + q + body + q
    if R.random() < 0.15:
        s += ' ' + (pre if pre.lower() in ('b','br','rb') else '') + q + 'z' + q
    return s
def atom(d):
    c = R.randrange(12 if d < 3 else 4)
    if c == 0: return R.choice(NAMES)
    if c == 1: return num()
    if c == 2: return string()
    if c == 3: return R.choice(['None', 'True', 'False', '...'])
    if c == 4: return '(' + expr(d+1) + ')'
    if c == 5: return '(' + ', '.join(expr(d+1) for _ in range(R.randrange(3))) + R.choice(['', ',']) + ')'
    if c == 6: return '[' + ', '.join(R.choice(['', '*']) + expr(d+1) for _ in range(R.randrange(3))) + ']'
    if c == 7: return '{' + ', '.join(expr(d+1) + ': ' + expr(d+1) if R.random() < .8 else '**' + atom(d+1) for _ in range(R.randrange(3))) + '}'
    if c == 8: return '{' + ', '.join(expr(d+1) for _ in range(1 + R.randrange(2))) + '}'
    if c == 9: return atom(d+1) + '.' + R.choice(NAMES)
    if c == 10: return atom(d+1) + '(' + ', '.join(R.choice(['', '*', '**', 'k=']) + expr(d+1) for _ in range(R.randrange(3))) + ')'
    return atom(d+1) + '[' + R.choice([expr(d+1), expr(d+1) + ':', ':' + expr(d+1), '::' + expr(d+1), expr(d+1) + ', ' + expr(d+1), expr(d+1) + ',', '*' + atom(d+1)]) + ']'
def expr(d=0):
    if d > 4: return atom(d)
    c = R.randrange(10)
    if c < 4: return atom(d)
    if c == 4: return R.choice(['-', '+', '~', 'not ', '- -', 'await ']) + expr(d+1)
    if c == 5: return expr(d+1) + ' ' + R.choice(['+', '-', '*', '/', '//', '%', '@', '**', '<<', '>>', '&', '|', '^']) + ' ' + expr(d+1)
    if c == 6: return expr(d+1) + ' ' + R.choice(['and', 'or']) + ' ' + expr(d+1)
    if c == 7: return expr(d+1) + ' ' + R.choice(['<', '==', 'in', 'not in', 'is', 'is not', '>=']) + ' ' + expr(d+1)
    if c == 8: return expr(d+1) + ' if ' + expr(d+1) + ' else ' + expr(d+1)
    return 'lambda ' + R.choice(['', 'x', 'x, y=1', '*a, **k', 'a, /, b', '*, k']) + ': ' + expr(d+1)
def param(ann=True):
    s = R.choice(NAMES[:7]) + str(R.randrange(100))
    if ann and R.random() < .4: s += R.choice([': ', ':', ' : ']) + expr(2)
    return s
def params():
    parts = []; defaulted = False
    for _ in range(R.randrange(4)):
        p = param()
        if defaulted or R.random() < .4:
            p += R.choice(['=', ' = ']) + expr(2); defaulted = True
        parts.append(p)
    if parts and R.random() < .2: parts.insert(R.randrange(1, len(parts)+1), '/')
    star = R.random()
    if star < .2: parts.append('*' + param())
    elif star < .35: parts.append('*'); parts.append(param() + ('=' + expr(2) if R.random() < .5 else ''))
    if R.random() < .2: parts.append('**' + param())
    sep = R.choice([', ', ',', ',\n    ', ' ,  # c\n  '])
    return sep.join(parts) + (',' if parts and R.random() < .2 else '')
def definition():
    c = R.random()
    deco = R.choice(['', '', '@dec\n', '@a.b(1)\n@c\n'])
    doc = R.choice(['', '', '    pass\n', '    """Doc  string\n\n    more."""\n', "    'one' 'two'\n", '    r"raw\\n"\n', '    f"no"\n', "    b'bytes'\n", '    """  """\n', '    "x"; y = 1\n', '    u"\\u00e9 \\t tab"\n'])
    if not doc: doc = '    pass\n'
    if c < .3:
        bases = ', '.join(R.choice([expr(2), 'metaclass=' + expr(2), '*' + atom(2), '**' + atom(2)]) for _ in range(R.randrange(3)))
        head = 'class C' + str(R.randrange(9)) + R.choice(['', '()', '(' + bases + ')']) + ':'
    else:
        head = R.choice(['def', 'async def', 'def  ']) + ' f' + str(R.randrange(9)) + '(' + params() + ')' + R.choice(['', ' -> ' + expr(2)]) + ':'
    return deco + head + '\n' + doc
out = sys.argv[1]; os.makedirs(out, exist_ok=True)
n_ok = 0
for i in range(int(sys.argv[3]) if len(sys.argv) > 3 else 2000):
    src = '\n'.join(definition() for _ in range(1 + R.randrange(3)))
    if R.random() < 0.15:
        cut = R.randrange(len(src)); src = src[:cut] + R.choice(['', ')', '(', '"', "'''", ':', '\\', ' if', ',', '*', '\n  x\n', '\t']) + src[cut + R.randrange(3):]
    try: ast.parse(src); n_ok += 1
    except Exception: pass
    open(os.path.join(out, f'g{i}.py'), 'w').write(src)
print('valid', n_ok)
