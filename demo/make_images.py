"""Draw the demo's placeholder images: one small PNG per question, named by its image id.

The real GAMUT photographs are not redistributable, so the demo ships flat placeholders: a colour
per domain with the image id and domain written on it. The output is deterministic for a given
Pillow build. Run it by hand after adding questions, and commit the PNGs:

    .venv/bin/python demo/make_images.py
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

HERE = Path(__file__).resolve().parent
SIZE = (256, 192)

#: Background colour per domain; a domain not listed gets a colour derived from its name.
COLOURS: dict[str, tuple[int, int, int]] = {
    "plants": (74, 139, 74),
    "food": (214, 133, 58),
    "animals": (150, 105, 70),
    "vehicles": (70, 100, 160),
    "landmarks": (120, 120, 135),
    "everyday_objects": (95, 150, 150),
    "consumer_products": (140, 80, 150),
    "books": (160, 60, 70),
    "art": (190, 160, 60),
    "sports": (50, 130, 110),
}


def colour_for(domain: str) -> tuple[int, int, int]:
    """The background colour of a domain's placeholders."""
    if domain in COLOURS:
        return COLOURS[domain]
    digest = hashlib.sha256(domain.encode()).digest()
    return (64 + digest[0] % 128, 64 + digest[1] % 128, 64 + digest[2] % 128)


def placeholder(image_id: str, domain: str) -> bytes:
    """The PNG bytes of one placeholder image."""
    img = Image.new("RGB", SIZE, colour_for(domain))
    draw = ImageDraw.Draw(img)
    big, small = ImageFont.load_default(size=20), ImageFont.load_default(size=13)
    draw.rectangle((8, 8, SIZE[0] - 9, SIZE[1] - 9), outline=(255, 255, 255), width=2)
    draw.text((20, 60), image_id, fill=(255, 255, 255), font=big)
    draw.text((20, 95), domain.replace("_", " "), fill=(240, 240, 240), font=small)
    draw.text((20, 150), "placeholder image", fill=(240, 240, 240), font=small)
    buf = io.BytesIO()
    img.quantize(colors=16).save(buf, format="PNG", optimize=True)
    return buf.getvalue()


def main() -> None:
    """Write demo/images/<image_id>.png for every question in demo/questions.jsonl."""
    out = HERE / "images"
    out.mkdir(exist_ok=True)
    lines = (HERE / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line) for line in lines if line.strip()]
    for q in questions:
        target = out / f"{q['image_id']}.png"
        tmp = target.with_suffix(".png.tmp")
        tmp.write_bytes(placeholder(q["image_id"], q["domain"]))
        tmp.replace(target)
    print(f"wrote {len(questions)} placeholder images to {out}")


if __name__ == "__main__":
    main()
