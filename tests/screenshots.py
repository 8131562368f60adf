"""`make screenshots`: an SVG of every screen on fixed demo data, into screenshots/."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from textual._doc import take_svg_screenshot

from tests.support.chat_traces import CHAT_SCENES, chat_service
from tests.support.scenes import (
    SCENES,
    SIZES,
    Scene,
    demo_service,
    make_app,
    pin_time_zone,
    run_before,
)
from tui.demo.data import DemoKeys
from tui.server.run import LocalService

OUT = Path(__file__).resolve().parents[1] / "screenshots"


def main() -> int:
    pin_time_zone()
    folder = Path(tempfile.mkdtemp(prefix="tracetui-shots-"))
    OUT.mkdir(exist_ok=True)
    for make_service, scenes in (
        (demo_service, SCENES),
        (chat_service, CHAT_SCENES),  # a conversation, until the demo data records some
    ):
        service, keys = make_service(folder / f"{scenes[0].name}.sqlite3")
        try:
            write(service, keys, scenes)
        finally:
            service.stop()
    return 0


def write(service: LocalService, keys: DemoKeys, scenes: tuple[Scene, ...]) -> None:
    for scene in scenes:
        for size_name, size in SIZES.items():
            svg = take_svg_screenshot(
                app=make_app(service, keys, scene),
                terminal_size=size,
                run_before=run_before(scene),
            )
            path = OUT / f"{scene.name}-{size_name}.svg"
            path.write_text(svg)
            print(f"wrote {path.relative_to(OUT.parent)}")


if __name__ == "__main__":
    sys.exit(main())
