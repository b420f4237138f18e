"""Modal screens: approval, confirmation, argument form, history picker, source viewer, choice list."""
