import json,re,sys
src=open('crates/text/src/jargon.rs').read()
entries=[]
for m in re.finditer(r'triggers: &\[(.*?)\],\s*expansion: "(.*?)"',src,re.S):
    trig=re.findall(r'"((?:[^"\\]|\\.)*)"',m.group(1)); entries.append((trig,m.group(2)))
def fold(t):
    out=[' ']; last=True
    for c in t:
        if c.isalnum(): out.append(c.lower()); last=False
        elif not last: out.append(' '); last=True
    if not last: out.append(' ')
    return ''.join(out)
def fires(text,trig):
    f=fold(text); return any(' '+fold(t).strip()+' ' in f for t in trig)
A='../shared/data/acord/'
acord={}
for fn in ['queries.jsonl','queries_medium.jsonl','queries_long.jsonl']:
    for l in open(A+fn):
        q=json.loads(l); acord.setdefault(q['_id'],[]).append(q['text'])
writers=sys.argv[1:]
texts={w:{json.loads(l)['_id']:json.loads(l)['text'] for l in open(f'scripts/experiments/own_words/queries_{w}.jsonl')} for w in writers}
for i,(trig,exp) in enumerate(entries):
    ids=[q for q,ts in acord.items() if any(fires(t,trig) for t in ts)]
    miss=[(w,q,texts[w][q]) for q in ids for w in writers if not fires(texts[w][q],trig)]
    print(f'=== entry {i} [{trig[0]}] fires on {len(ids)} ids; writers miss {len(miss)}')
    for w,q,t in miss: print(f'  {w} | {q[:50]} | {t}')
