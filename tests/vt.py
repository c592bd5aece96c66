"""A small terminal screen for tests: enough of VT100 to replay what rich writes (text, CR,
LF, cursor up/down/column, erase in line/display; colours and modes are read and dropped).
Lines that scroll off the top are kept in ``history``."""

from __future__ import annotations

import re

CSI = re.compile(r"\x1b\[([0-9;?]*)([A-Za-z])|\x1b[()][0-9A-Za-z]|\x1b[=>78]|\x1b\][^\x07]*\x07")


class Screen:
    def __init__(self, rows: int, cols: int) -> None:
        self.rows, self.cols = rows, cols
        self.grid = [[" "] * cols for _ in range(rows)]
        self.history: list[str] = []
        self.row = self.col = 0
        self.pending_wrap = False
        self._rest = ""

    def text(self) -> str:
        """What the screen shows now, one line per row, trailing blanks cut."""
        return "\n".join("".join(r).rstrip() for r in self.grid)

    def all_text(self) -> str:
        """The scrolled-off lines, then the screen."""
        return "\n".join([*self.history, self.text()])

    def feed(self, data: str) -> None:
        """Take more output (an escape sequence cut at the end waits for the next call)."""
        data = self._rest + data
        cut = data.rfind("\x1b")
        if cut >= 0 and not CSI.match(data, cut) and len(data) - cut < 32:
            data, self._rest = data[:cut], data[cut:]
        else:
            self._rest = ""
        pos = 0
        for m in CSI.finditer(data):
            self._chars(data[pos : m.start()])
            if m.group(2):
                self._csi(m.group(1), m.group(2))
            pos = m.end()
        self._chars(data[pos:])

    def _newline(self) -> None:
        if self.row == self.rows - 1:
            self.history.append("".join(self.grid.pop(0)).rstrip())
            self.grid.append([" "] * self.cols)
        else:
            self.row += 1

    def _chars(self, text: str) -> None:
        for ch in text:
            if ch == "\r":
                self.col, self.pending_wrap = 0, False
            elif ch == "\n":
                self._newline()
                self.pending_wrap = False
            elif ch == "\b":
                self.col = max(0, self.col - 1)
            elif ch >= " ":
                if self.pending_wrap:
                    self.col, self.pending_wrap = 0, False
                    self._newline()
                self.grid[self.row][self.col] = ch
                if self.col == self.cols - 1:
                    self.pending_wrap = True
                else:
                    self.col += 1

    def _csi(self, params: str, op: str) -> None:
        if params.startswith("?"):
            return  # modes (cursor shown or hidden)
        args = [int(a) if a else 0 for a in params.split(";")] if params else []
        n = args[0] if args else 0
        self.pending_wrap = False
        if op == "A":
            self.row = max(0, self.row - max(1, n))
        elif op == "B":
            self.row = min(self.rows - 1, self.row + max(1, n))
        elif op == "C":
            self.col = min(self.cols - 1, self.col + max(1, n))
        elif op == "D":
            self.col = max(0, self.col - max(1, n))
        elif op == "G":
            self.col = min(self.cols - 1, max(1, n) - 1)
        elif op == "H":
            self.row = min(self.rows - 1, max(1, n) - 1)
            self.col = min(self.cols - 1, max(1, args[1] if len(args) > 1 else 1) - 1)
        elif op == "K":
            line = self.grid[self.row]
            start, end = {0: (self.col, self.cols), 1: (0, self.col + 1), 2: (0, self.cols)}.get(n, (0, 0))
            line[start:end] = [" "] * (end - start)
        elif op == "J":
            if n == 2:
                self.grid = [[" "] * self.cols for _ in range(self.rows)]
            elif n == 0:
                self.grid[self.row][self.col :] = [" "] * (self.cols - self.col)
                for r in range(self.row + 1, self.rows):
                    self.grid[r] = [" "] * self.cols
        # m (colours) and anything else: no effect on the text
