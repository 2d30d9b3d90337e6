"""What the meaning tests share: a few notes that no question of theirs shares a word with (except
where a test says so), and how long a busy machine may take to embed them."""

from __future__ import annotations

COVER_WAIT_S = 600.0  #: a busy shared machine: the model loads and embeds slowly, never fails for it

NOTES = {
    "Garden.md": "# Tomatoes\n\nSow the seeds in March, water them daily and pick the fruit in August.\n",
    "Money.md": "# Invoices\n\nEvery invoice is paid within thirty days of receipt; late payers are reminded.\n",
    "Kernel.md": "# Scheduler\n\nThe scheduler hands each runnable thread a slice of processor time.\n",
    "ja/猫.md": "# 猫の世話\n\n毎朝えさをあげて、水を取り替える。\n",
}
