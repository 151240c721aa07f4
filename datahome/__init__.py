"""Where tripbench keeps what it downloads, imports and caches: the data home, the places in it, and the downloader
that fills it; and the rules of every file that crosses the machine's edge: files made elsewhere read within bounds
(`input_files`), files for people written whole, CSV cells inert (`output_files`). It imports nothing of ours but
`errors`, so every layer may use it."""

from datahome.download import download, staging, stale_staging
from datahome.home import HOME_ENV, default_cache_dir, default_home, home_option, in_home, price_table_path
from datahome.install import copy_file, copy_tree, swap_in

__all__ = [
    "HOME_ENV",
    "copy_file",
    "copy_tree",
    "default_cache_dir",
    "default_home",
    "download",
    "home_option",
    "in_home",
    "price_table_path",
    "stale_staging",
    "staging",
    "swap_in",
]
