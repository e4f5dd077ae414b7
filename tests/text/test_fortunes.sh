#!/bin/sh
# test_fortunes.sh - the text datasets on real text: builds the 8-language
# identification tree (tools/make_langid.py) and the English language-model
# split (tools/split_fortunes.py) from Debian's fortunes packages, then
# loads them with test_text --fortunes, which reports the counts. Skips
# (77) when a package is missing: tools/setup.sh installs them.
#   test_fortunes.sh TEST_TEXT SOURCE_ROOT
set -u
test_text=$1
src=$2
root=/usr/share/games/fortunes
for p in fortunes cs de es it pl ru brasil; do
    path=$root/$p
    if [ ! -e "$path" ]; then
        echo "SKIP: $path is missing (apt install fortunes fortunes-de fortunes-es fortunes-it" \
             "fortunes-br fortunes-pl fortunes-cs fortunes-ru)"
        exit 77
    fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
python3 "$src/tools/make_langid.py" "$tmp/langid" || exit 1
python3 "$src/tools/split_fortunes.py" "$tmp/en_train.txt" "$tmp/en_test.txt" || exit 1
"$test_text" --fortunes "$tmp/langid" "$tmp/en_train.txt" "$tmp/en_test.txt"
