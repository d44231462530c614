import { ApiProperty } from '@app/common';

/** GET /mcp/toolsets?<query>: what a connection with this query would get. */
export class ToolsetSelectionDto {
  @ApiProperty({ type: [String], description: 'The toolsets a connection with this URL gets' }) active: string[];
  @ApiProperty({ type: [String], description: 'Names the URL asked for that no toolset declares: ignored, the connection is served anyway' }) unknown: string[];
}

export class ServerToolsetDto {
  @ApiProperty({ description: 'What a URL says to select it' }) name: string;
  @ApiProperty() title: string;
  @ApiProperty() description: string;
  @ApiProperty({ description: 'On when the URL names nothing' }) default: boolean;
  @ApiProperty({ description: 'On whatever the URL says' }) always: boolean;
  @ApiProperty({ description: 'On in this session' }) active: boolean;
}

/** The answer of list_server_toolsets. */
export class ServerToolsetsDto extends ToolsetSelectionDto {
  @ApiProperty({ type: [ServerToolsetDto] }) toolsets: ServerToolsetDto[];
  @ApiProperty({ type: [String], description: 'The tools of this session' }) tools: string[];
  @ApiProperty({ description: 'How to connect with other toolsets' }) how_to_select: string;
}
