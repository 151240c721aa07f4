"""The ten cities and the official Chinese name -> directory (pinyin) mapping (`DataLoader._city_to_pinyin`)."""

from __future__ import annotations

from collections.abc import Mapping

CITY_DIRS: Mapping[str, str] = {
    "北京": "beijing", "上海": "shanghai", "广州": "guangzhou", "深圳": "shenzhen", "杭州": "hangzhou",
    "成都": "chengdu", "南京": "nanjing", "武汉": "wuhan", "苏州": "suzhou", "重庆": "chongqing",
}
"""Chinese city name -> its folder under each `database/<table>/`."""
_CITY_NAMES = {folder: name for name, folder in CITY_DIRS.items()}


def city_dir(city: str) -> str:
    """A city's folder name as the official loader derives it: the mapped pinyin, else the name lower-cased (so a
    pinyin name maps to itself)."""
    return CITY_DIRS.get(city, city.lower())


def city_name(city: str) -> str:
    """A city's Chinese name (the train files and airports are named by it), from Chinese or pinyin; an unknown
    name is returned as given."""
    return city if city in CITY_DIRS else _CITY_NAMES.get(city.lower(), city)
