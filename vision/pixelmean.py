"""PixelMeans: a still wager's pixels averaged over its frames, and the average read by the same reader.

A camera is fixed and a wager at rest does not move: each frame of it carries fresh sensor noise
(and its own JPEG of that noise). vision/fusion.py fuses the reader's *readings* of those frames;
this fuses the *pixels*: each zone's part of the frame (its patch's bounding box, `ZoneGeometry.box`)
is summed, in float32, over the frames since the zone last changed, and the mean, `n` frames of it,
is read by a second `Reader` of the same calibration and tuning (the reader is not changed: the
mean is one more frame to it, with less noise).

Which frames go in is the main reader's to say, frame by frame (`update`):

- a zone read afresh because its patch changed (chips put down or taken, a hand gone, the light
  on it changed beyond the reader's limit: `Reader.afresh` "changed") or because nothing was
  remembered ("new": the first frame, a move of the camera followed, `forget`) starts its box's
  mean again with this frame; a wager that changes without a hand seen is such a change;
- a zone with a hand or an arm over it ("blocked") has its box emptied, and the frame is not added
  there;
- the camera bumped, or its check not verified: every mean is emptied and the mean reader forgets
  its markers;
- every other pixel of the boxes takes the frame: a still zone, and the felt around it.

Boxes overlap; a pixel's mean counts the frames since any box it lies in last restarted, so a
nearer stack put down restarts the farther zone's pixels it covers, and a zone's `frames` is the
fewest in its box. Memory: one float32 sum and one float32 count over the boxes' bounding
rectangle, whatever the number of frames (a half-table camera at 1280x720: a few MB).

`read(frame, zones)` asks the mean reader to read `zones` afresh on a mean frame: the first time
(and after a reset, or when most zones restarted at once: the light changed) the frame with every
box's mean pasted in (a pixel no frame went into shows this frame), then the frame it was last
shown with only the asked zones' boxes pasted in anew, so that it reads those and what they touch,
not every zone whose mean moved (a restarted box shows one noisy frame where it showed a smooth
mean: pasting every box made it read 13-15 zones afresh, 38-52 ms, after each wager changed).
"""

from __future__ import annotations

from collections.abc import Iterable

import cv2
import numpy as np
import numpy.typing as npt

from vision.reader import Reader
from vision.readings import FrameReading, ZoneReading

Image = npt.NDArray[np.uint8]


class PixelMeans:
    """The running pixel means of one camera's zones (see the module's docstring)."""

    def __init__(self, reader: Reader) -> None:
        self.reader = reader
        self.mean_reader = Reader(reader.layout, reader.calibration, reader.chips, reader.tuning)
        h, w = reader.camera.height, reader.camera.width
        boxes = {g.zone.name: g.box for g in reader.zones if g.in_view}
        x0 = min((b[0] for b in boxes.values()), default=0)
        y0 = min((b[1] for b in boxes.values()), default=0)
        x1 = min(max((b[2] for b in boxes.values()), default=0), w)
        y1 = min(max((b[3] for b in boxes.values()), default=0), h)
        self.rect = (x0, y0, max(x1, x0), max(y1, y0))
        # each zone's box in the rectangle's coordinates, as slices
        self._boxes = {
            name: (slice(b[1] - y0, min(b[3], h) - y0), slice(b[0] - x0, min(b[2], w) - x0))
            for name, b in boxes.items()
        }
        self._sum = np.zeros((y1 - y0, x1 - x0, 3), dtype=np.float32)
        self._count = np.zeros((y1 - y0, x1 - x0), dtype=np.float32)
        self.reads = 0  # frames shown to the mean reader
        # what the mean reader was last shown: a whole mean frame at first (and after a reset or
        # a change of most zones at once: the light), then only the asked zones' boxes pasted in,
        # so that it reads those and what they touch, not every zone whose mean moved
        self._shown: Image | None = None

    @property
    def nbytes(self) -> int:
        return int(self._sum.nbytes + self._count.nbytes)

    def reset(self) -> None:
        self._sum[:] = 0.0
        self._count[:] = 0.0
        self._shown = None
        self.mean_reader.forget(markers=True)

    def update(self, reading: FrameReading, frame: Image) -> None:
        """Add `frame`, which the main reader read into `reading`, to the still zones' means."""
        if reading.bumped or not reading.camera.verified:
            self.reset()
            return
        restarted = [name for name, why in self.reader.afresh.items() if why != "asked" and name in self._boxes]
        for name in restarted:
            self._empty(name)
        if 2 * len(restarted) > len(self._boxes):  # most zones at once: the light, or a forget
            self._shown = None
        x0, y0, x1, y1 = self.rect
        cv2.accumulate(frame[y0:y1, x0:x1], self._sum)
        self._count += 1.0
        for name, seen in reading.zones.items():
            if seen.state == "blocked" and name in self._boxes:
                self._empty(name)

    def _empty(self, name: str) -> None:
        rows, cols = self._boxes[name]
        self._sum[rows, cols] = 0.0
        self._count[rows, cols] = 0.0

    def frames(self, name: str) -> int:
        """How many frames the zone's mean holds (the fewest of any pixel of its box)."""
        box = self._boxes.get(name)
        if box is None:
            return 0
        return int(self._count[box].min())

    def mean_frame(self, frame: Image) -> Image:
        """`frame` with each pixel of the boxes replaced by its mean (where a frame went in)."""
        x0, y0, x1, y1 = self.rect
        shown = frame.copy()
        count = np.maximum(self._count, 1.0)
        mean = cv2.divide(self._sum, cv2.merge([count, count, count]))
        inside = shown[y0:y1, x0:x1]
        np.copyto(inside, cv2.convertScaleAbs(mean), where=(self._count > 0)[..., None])
        return shown

    def _paste(self, name: str, frame: Image) -> None:
        """Paste the zone's box's means into the frame last shown (this frame's pixels where no
        frame went in)."""
        assert self._shown is not None
        rows, cols = self._boxes[name]
        x0, y0 = self.rect[0], self.rect[1]
        there = (slice(rows.start + y0, rows.stop + y0), slice(cols.start + x0, cols.stop + x0))
        count = self._count[rows, cols]
        held = np.maximum(count, 1.0)
        mean = cv2.convertScaleAbs(cv2.divide(self._sum[rows, cols], cv2.merge([held, held, held])))
        self._shown[there] = np.where((count > 0)[..., None], mean, frame[there])

    def read(self, frame: Image, zones: Iterable[str]) -> dict[str, tuple[int, ZoneReading]]:
        """The mean reader's reading of each of `zones` on the mean frame, with how many frames
        its mean holds."""
        wanted = [name for name in zones if name in self._boxes]
        if not wanted:
            return {}
        held = {name: self.frames(name) for name in wanted}
        if self._shown is None or self._shown.shape != frame.shape:
            self._shown = self.mean_frame(frame)
        else:
            for name in wanted:
                self._paste(name, frame)
        self.mean_reader.reread(wanted)
        seen = self.mean_reader.read(self._shown)
        self.reads += 1
        if seen.bumped or not seen.camera.verified:
            self.mean_reader.forget(markers=True)
            return {}
        return {name: (held[name], seen.zones[name]) for name in wanted if name in self.mean_reader.afresh}
