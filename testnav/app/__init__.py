"""The command-line application (`testnav`, `python -m testnav` and run.py: `main`; `testnav figures`:
`figures`): the stage table (`stages`), the guard rails that turn a bad override into one line
(`cli`), the finished-run memo (`memo`), the pre-flight (`check`) and the §3.3 hyperparameter grid
(`grid`). Library code never imports this package."""
