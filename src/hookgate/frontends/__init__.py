"""Front ends: each reads questions, calls `turn.run_turn`, and shows what it reports."""
