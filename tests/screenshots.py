"""`make screenshots`: an SVG of every screen on fixed demo data, into screenshots/."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from textual._doc import take_svg_screenshot

from tests.scenes import SCENES, SIZES, demo_service, make_app, pin_time_zone, run_before

OUT = Path(__file__).resolve().parents[1] / "screenshots"


def main() -> int:
    pin_time_zone()
    service, keys = demo_service(Path(tempfile.mkdtemp(prefix="tracetui-shots-")) / "demo.sqlite3")
    OUT.mkdir(exist_ok=True)
    try:
        for scene in SCENES:
            for size_name, size in SIZES.items():
                svg = take_svg_screenshot(
                    app=make_app(service, keys, scene),
                    terminal_size=size,
                    run_before=run_before(scene),
                )
                path = OUT / f"{scene.name}-{size_name}.svg"
                path.write_text(svg)
                print(f"wrote {path.relative_to(OUT.parent)}")
    finally:
        service.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
