# shellcheck shell=bash
# SPDX-License-Identifier: GPL-2.0
# bash completion for kwqctl. Nothing here lists commands or options: the
# commands come from `kwqctl --help` and a command's options from
# `kwqctl COMMAND --help`, both printed from kwqctl's command table; queue
# names come from `kwqctl list`; batch takes a file.

# _kwqctl_opts KWQCTL COMMAND [valued]: the command's options (with
# "valued", only those that take a value), one a line.
_kwqctl_opts()
{
	local re='^  \(-[^ ,]*\)\(, \(--[^ ]*\)\)\{0,1\}.*'

	[ "${3:-}" = valued ] && re='^  \(-[^ ,]*\)\(, \(--[^ ]*\)\)\{0,1\} [A-Z].*'
	"$1" "$2" --help 2>/dev/null | sed -n "s/$re/\1\n\3/p" | sed '/^$/d'
}

_kwqctl()
{
	local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
	local k=${COMP_WORDS[0]} cmd='' w i at=0 npos=0 valued dashdash=''
	local -a dev=()

	COMPREPLY=()
	for ((i = 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		case $w in
		-d) dev=(-d "${COMP_WORDS[i + 1]}") && i=$((i + 1)) ;;
		-d?*) dev=("$w") ;;
		-*) ;;
		*) cmd=$w at=$i && break ;;
		esac
	done
	if [ -z "$cmd" ]; then
		if [ "$prev" = -d ]; then
			mapfile -t COMPREPLY < <(compgen -f -- "$cur")
		elif [[ $cur == -* ]]; then
			mapfile -t COMPREPLY < <(compgen -W '-d --help' -- "$cur")
		else
			mapfile -t COMPREPLY < <(compgen -W "$("$k" --help 2>/dev/null |
				sed -n 's/^  kwqctl \([^ ]*\).*/\1/p')" -- "$cur")
		fi
		return
	fi
	valued=$(_kwqctl_opts "$k" "$cmd" valued)
	# Which positional is being typed: skip options and their values.
	for ((i = at + 1; i < COMP_CWORD; i++)); do
		w=${COMP_WORDS[i]}
		if [ -n "$dashdash" ] || [[ $w != -* ]]; then
			npos=$((npos + 1))
		elif [ "$w" = -- ]; then
			dashdash=1
		elif grep -qxF -- "$w" <<<"$valued"; then
			i=$((i + 1))
		fi
	done
	if [[ $prev == -* ]] && [ -z "$dashdash" ] &&
		grep -qxF -- "$prev" <<<"$valued"; then
		return	# an option's value: nothing to offer
	fi
	if [[ $cur == -* ]] && [ -z "$dashdash" ]; then
		mapfile -t COMPREPLY < <(compgen -W \
			"$(_kwqctl_opts "$k" "$cmd") --help" -- "$cur")
	elif [ "$cmd" = batch ]; then
		[ "$npos" = 0 ] && mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	elif [ "$npos" = 0 ] && [ "$cmd" != list ]; then
		mapfile -t COMPREPLY < <(compgen -W \
			"$("$k" "${dev[@]}" list 2>/dev/null)" -- "$cur")
	elif [ "$cmd" = work ] && [ "$npos" = 1 ]; then
		mapfile -t COMPREPLY < <(compgen -c -- "$cur")
	elif [ "$cmd" = work ]; then
		mapfile -t COMPREPLY < <(compgen -f -- "$cur")
	fi
}
complete -F _kwqctl kwqctl
