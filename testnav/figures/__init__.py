"""Figures and tables rebuilt from what is under results/ (`make figures`)."""
